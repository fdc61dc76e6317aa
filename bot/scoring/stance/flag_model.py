"""Whether a misconception is said: a small model over what the stance model and the pitfall head
read of one pitfall's candidate sentences in one answer (bot/scoring/stance/judge.py).

The stance model's P(asserts) alone, at one threshold, missed a third of the misconceptions on
fresh sets while flagging correct sentences written in the claim's terms. What else the grader
already holds about the same sentences tells the two apart better: how sure the model is that the
sentence *rejects* the claim, the runner-up sentence, the head's logits, and how close the
sentence sits to the claim, to its correction and to the question's key points. Boosted trees
(scikit-learn's HistGradientBoostingClassifier, walked here as arrays: bot/scoring/boosted_trees.py)
weigh them, fitted by `python -m bot train stance-flags` on the spent labelled sets, with
P(asserts) only ever raising and P(rejects) only ever lowering the result.

Nothing about the answer as a whole is among the features (its length, its language, how many
misconceptions it holds): on the labelled sets those say more about how the sets were written
(answers that reject a misconception are twice as long as those that assert one) than about
whether a sentence asserts a claim (docs/grading.md, twenty-first attempt).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from bot.scoring.boosted_trees import FIELDS, as_arrays, leaf_sums, read_booster
from bot.scoring.fitted_json import load_fitted, save_fitted

log = logging.getLogger(__name__)

# Each feature with the direction its weight may take (+1 raises P(said), -1 lowers it, 0 either).
SIGNS = {
    "asserts": 1,  # log-odds of the stance model's best P(asserts) among the candidates
    "rejects": -1,  # log-odds of P(rejects) for that same sentence
    "runner_up": 0,  # log-odds of the second best P(asserts), if any
    "head_logit": 0,  # the pitfall head's raw logit for the best sentence
    "head_gated": 0,  # the head's best logit after its marker and polarity gates
    "claim_sim": 0,  # the best sentence with the claim (calibrated cosine)
    "fix_sim": 0,  # ... with the pitfall's correction
    "fix_over_claim": 0,  # fix_sim - claim_sim
    "point_sim": 0,  # ... with the closest key point of the question
    "asserting": 0,  # candidates read at P(asserts) 0.5 or more
}
FEATURES = tuple(SIGNS)
REFIT = "python -m bot train stance-flags"
FLAGS_FILE = "flags.json"
# The trees' size: 150 trees of depth 3 ranked the spent sets left out as well as larger ones.
TREES, DEPTH, LEAF_SIZE, LEARNING_RATE = 150, 3, 40, 0.05
NO_LOGIT = -10.0  # a gated logit where the head's gates close every candidate


def log_odds(p: float) -> float:
    p = min(max(float(p), 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class CandidateReading:
    """One candidate sentence of one pitfall, as the grader read it."""

    asserts: float  # the stance model's P(asserts)
    rejects: float  # its P(rejects)
    head_logit: float
    head_gated: float  # -inf where the head's gates close
    claim_sim: float
    fix_sim: float
    point_sim: float


def features(readings: Sequence[CandidateReading]) -> np.ndarray:
    """FEATURES of one pitfall's candidates (at least one)."""
    ranked = sorted(readings, key=lambda r: -r.asserts)
    best = ranked[0]
    gated = max(r.head_gated for r in readings)
    return np.array(
        [
            log_odds(best.asserts),
            log_odds(best.rejects),
            log_odds(ranked[1].asserts if len(ranked) > 1 else 0.0),
            best.head_logit,
            gated if math.isfinite(gated) else NO_LOGIT,
            best.claim_sim,
            best.fix_sim,
            best.fix_sim - best.claim_sim,
            best.point_sim,
            float(sum(r.asserts >= 0.5 for r in readings)),
        ]
    )


@dataclass(frozen=True)
class FlagModel:
    """P(the answer asserts this pitfall) = sigmoid(baseline + one leaf value per tree); said at
    `flag_at` or more."""

    baseline: float
    feature: tuple[tuple[int, ...], ...]
    threshold: tuple[tuple[float, ...], ...]
    left: tuple[tuple[int, ...], ...]
    right: tuple[tuple[int, ...], ...]
    value: tuple[tuple[float, ...], ...]
    flag_at: float = 0.5
    adapter: str = ""  # sha256 of the stance adapter whose readings it was fitted on
    fitted_on: str = ""
    figures: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, ...]:
        return as_arrays((self.feature, self.threshold, self.left, self.right, self.value))

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """rows: (n, len(FEATURES)) -> (n,) P(said)."""
        raw = self.baseline + leaf_sums(self._arrays, np.atleast_2d(rows))
        p: np.ndarray = 1.0 / (1.0 + np.exp(-raw))
        return p

    def save(self, path: Path) -> None:
        save_fitted(self, FEATURES, path)

    @classmethod
    def load(cls, path: Path) -> FlagModel:
        data = load_fitted(path, FEATURES, REFIT)
        for name in FIELDS:  # lists of lists in JSON
            data[name] = tuple(tuple(row) for row in data[name])
        return cls(**data)


def load_flag_model(directory: Path, adapter: str) -> FlagModel | None:
    """The flag model fitted beside the stance model's weights on the readings of this adapter
    (its sha256), or None: P(asserts) at the stance model's `flag_at` decides. A stance model
    retrained since has other readings, and trees fitted on the old ones would misread them."""
    path = directory / FLAGS_FILE
    if not path.exists():
        return None
    model = FlagModel.load(path)
    if model.adapter != adapter:
        log.warning("%s was fitted on another stance adapter; run `%s`", path, REFIT)
        return None
    return model


def fit(rows: np.ndarray, said: np.ndarray, seed: int = 0) -> FlagModel:
    """Boosted trees of `said` (0/1) on the rows, each feature kept to its SIGNS direction."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # only `train stance-flags` fits

    booster = HistGradientBoostingClassifier(
        max_iter=TREES,
        max_depth=DEPTH,
        learning_rate=LEARNING_RATE,
        min_samples_leaf=LEAF_SIZE,
        monotonic_cst=list(SIGNS.values()),
        early_stopping=False,
        random_state=seed,
    ).fit(rows, said)
    baseline, tables = read_booster(booster)
    return FlagModel(baseline=baseline, **tables)
