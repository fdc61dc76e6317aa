"""`python -m bot train stance-flags`: fit the flag model (bot/scoring/stance/flag_model.py) that
says whether an answer asserts a pitfall, from what the grader reads of the pitfall's candidate
sentences, on the spent labelled sets that choose the stance thresholds, blind27 and blind28.

Its threshold is chosen on readings it was not fitted on: each set is read by a model fitted on
the others, and the threshold is the one that, on those left-out readings together, gives the
most recall with at most FLAG_TARGET of the answers without a misconception flagged and
REJECT_TARGET of those that reject one flagged with it (the rule `train stance-thresholds`
uses). The figures it writes are those left-out ones, beside the stance model's P(asserts) at its
own threshold on the same readings; the committed model is then fitted on every set."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import Sample, load_bank_eval
from bot.evaluation.stance_thresholds import (
    FLAG_TARGET,
    REJECT_TARGET,
    THRESHOLD_SETS,
    rates,
)
from bot.evaluation.stance_training import CARD, remember
from bot.scoring.grader import Grader
from bot.scoring.service import ScoringService
from bot.scoring.stance.flag_model import FLAGS_FILE, fit, log_odds
from bot.scoring.stance.model import ADAPTER_FILE, WEIGHTS_DIR, StanceConfig

# Only sets whose sentences never trained the stance model: its readings of those are in sample
# and would teach the flag model too much trust. blind22 to blind26, fitted here before, now
# train it (content/stance/answers.jsonl). blind27 and blind28, read once in the twenty-fifth
# and twenty-sixth attempts, are spent and never trained it.
FLAG_SETS = (*THRESHOLD_SETS, "blind27", "blind28")
CHUNK = 64
Row = tuple[str, np.ndarray, bool]  # pitfall id, features, the head's own flag stands


def read_rows(grader: Grader, bank: QuestionBank, samples: list[Sample]) -> list[list[Row]]:
    result: list[list[Row]] = []
    for start in range(0, len(samples), CHUNK):
        chunk = samples[start : start + CHUNK]
        result += grader.flag_rows(
            [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in chunk]
        )
    return result


def training_arrays(samples: list[Sample], rows: list[list[Row]]) -> tuple[np.ndarray, np.ndarray]:
    """(features, 1 where the answer asserts that pitfall)."""
    x = [f for answer in rows for _, f, _ in answer]
    y = [
        int(str(s.pitfall) == pid)
        for s, answer in zip(samples, rows, strict=True)
        for pid, _, _ in answer
    ]
    return np.array(x).reshape(len(x), -1), np.array(y)


def said(rows: list[list[Row]], chances: list[np.ndarray], at: float) -> list[dict[str, float]]:
    """Per answer, the pitfalls said (1.0) or not (0.0): the head's own flag, or P >= `at`."""
    return [
        {pid: float(head or p >= at) for (pid, _, head), p in zip(answer, c, strict=True)}
        for answer, c in zip(rows, chances, strict=True)
    ]


def split(rows: list[list[Row]], flat: np.ndarray) -> list[np.ndarray]:
    """A flat array of one value per row, back into one array per answer."""
    out, start = [], 0
    for answer in rows:
        out.append(flat[start : start + len(answer)])
        start += len(answer)
    return out


def choose(samples: list[Sample], rows: list[list[Row]], chances: list[np.ndarray]) -> float:
    """The threshold with the most recall within both targets, then the fewest false flags."""
    best: tuple[tuple[float, float], float] = ((-1.0, 0.0), 0.99)
    for hundredths in range(5, 100):
        at = hundredths / 100
        f = rates(samples, said(rows, chances, at), 0.5)
        if f["false_flags"] <= FLAG_TARGET and f["rejecting_flagged"] <= REJECT_TARGET:
            key = (f["recall"], -f["false_flags"])
            if key > best[0]:
                best = (key, at)
    return best[1]


def run_stance_flags(
    settings: Settings,
    bank: QuestionBank,
    directory: Path = WEIGHTS_DIR,
    sets: tuple[str, ...] = FLAG_SETS,
) -> int:
    service = ScoringService.from_settings(settings, bank)
    grader = service.warm_grader()
    if grader.stance is None or grader.head is None:
        print("error: no stance model or pitfall head for this embedding model")
        return 2
    started = time.monotonic()
    root = settings.content_dir.parent
    samples = {name: load_bank_eval(root / name, name).samples for name in sets}
    rows: dict[str, list[list[Row]]] = {}
    for name in sets:  # about a minute a set on 2 cores
        rows[name] = read_rows(grader, bank, samples[name])
        print(f"read {name}: {len(samples[name])} answers", flush=True)
    arrays = {name: training_arrays(samples[name], rows[name]) for name in sets}
    # Each set read by a model fitted on the others.
    left_out: dict[str, list[np.ndarray]] = {}
    for name in sets:
        x = np.concatenate([arrays[n][0] for n in sets if n != name])
        y = np.concatenate([arrays[n][1] for n in sets if n != name])
        model = fit(x, y)
        left_out[name] = split(rows[name], model.probabilities(arrays[name][0]))
    pooled_samples = [s for n in sets for s in samples[n]]
    pooled_rows = [r for n in sets for r in rows[n]]
    pooled_chances = [c for n in sets for c in left_out[n]]
    at = choose(pooled_samples, pooled_rows, pooled_chances)
    # The stance model's P(asserts) at its own threshold, on the same readings: the first feature
    # is its log-odds.
    config = StanceConfig.load(directory)
    stance_at = log_odds(config.flag_at)
    alone = {n: split(rows[n], (arrays[n][0][:, 0] >= stance_at).astype(float)) for n in sets}
    figures: dict[str, Any] = {
        "fitted_on": " and ".join(f"content/{n}" for n in sets),
        "answers": len(pooled_samples),
        "flag_at": at,
        "pooled": {
            "flag_model": rates(pooled_samples, said(pooled_rows, pooled_chances, at), 0.5),
            "stance_alone": rates(
                pooled_samples, said(pooled_rows, [c for n in sets for c in alone[n]], 0.5), 0.5
            ),
        },
    }
    for name in sets:
        figures[name] = {
            "flag_model": rates(samples[name], said(rows[name], left_out[name], at), 0.5),
            "stance_alone": rates(samples[name], said(rows[name], alone[name], 0.5), 0.5),
        }
    x = np.concatenate([arrays[n][0] for n in sets])
    y = np.concatenate([arrays[n][1] for n in sets])
    final = fit(x, y)
    stamp = {
        "date": date.today().isoformat(),
        "command": "python -m bot train stance-flags",
        "seconds": round(time.monotonic() - started),
        "rows": len(y),
        "said_rows": int(y.sum()),
    }
    adapter = config.sha256[ADAPTER_FILE]
    chosen = {"flag_at": at, "adapter": adapter, "fitted_on": figures["fitted_on"]}
    replace(final, **chosen, figures=figures["pooled"] | stamp).save(directory / FLAGS_FILE)
    remember(CARD, "flags", figures | stamp)
    print(json.dumps(figures, indent=2))
    service.close()
    return 0
