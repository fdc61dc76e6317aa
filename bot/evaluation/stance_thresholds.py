"""`python -m bot train stance-thresholds`: the P(asserts) at which the grader says "you said
this" and at which "worth checking", chosen on the tuning sets (content/eval, content/heldout,
content/blind; never content/blind2) and written into the artefact's stance.json.

"Said" is set where at most FLAG_TARGET of the answers that hold no misconception get a flag;
"worth checking" where at most CHECK_TARGET get a flag or a hint. The stance model was not
trained on these sets, so the figures printed are the model's own on answers it has not seen;
the thresholds, though, are fitted to them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import Sample, load_bank_eval
from bot.scoring.grader import Grader
from bot.scoring.service import ScoringService
from bot.scoring.stance.judge import PairModel
from bot.scoring.stance.model import WEIGHTS_DIR, StanceConfig

FLAG_TARGET = (
    0.03  # as the pitfall head's "said" (docs/grading.md): 0.05 is the goal on new answers
)
CHECK_TARGET = 0.15
TUNING_SETS = ("eval", "heldout", "blind")
CHUNK = 64


class _Everything:
    """The stance model with every shortlisted pitfall reported, with its probability."""

    flag_at = 0.0
    check_at = 0.0

    def __init__(self, model: PairModel):
        self.model = model

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return self.model.probabilities(pairs)


def best_probabilities(
    grader: Grader, bank: QuestionBank, samples: list[Sample]
) -> list[dict[str, float]]:
    """Per answer: each pitfall's highest P(asserts) over its shortlisted sentences."""
    result: list[dict[str, float]] = []
    for start in range(0, len(samples), CHUNK):
        chunk = samples[start : start + CHUNK]
        graded = grader.grade_many(
            [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in chunk]
        )
        result += [{h.id: float(h.probability or 0.0) for h in g.pitfalls} for g in graded]
    return result


def rates(
    samples: list[Sample], best: list[dict[str, float]], threshold: float
) -> dict[str, float]:
    clean = [b for s, b in zip(samples, best, strict=True) if s.pitfall is None]
    stated = [(s, b) for s, b in zip(samples, best, strict=True) if s.pitfall is not None]
    rejecting = [(s, b) for s, b in zip(samples, best, strict=True) if s.rejects is not None]
    flags = sum(sum(p >= threshold for p in b.values()) for b in best)
    right = sum(b.get(str(s.pitfall), 0.0) >= threshold for s, b in stated)
    return {
        "recall": round(right / max(len(stated), 1), 3),
        "false_flags": round(
            sum(max(b.values(), default=0) >= threshold for b in clean) / max(len(clean), 1), 3
        ),
        "rejecting_flagged": round(
            sum(b.get(str(s.rejects), 0.0) >= threshold for s, b in rejecting)
            / max(len(rejecting), 1),
            3,
        ),
        "precision": round(right / flags, 3) if flags else 0.0,
    }


def choose(samples: list[Sample], best: list[dict[str, float]], target: float) -> float:
    """The lowest threshold (on a 0.01 grid) at which the false-flag rate is within target."""
    for hundredths in range(5, 100):
        threshold = hundredths / 100
        if rates(samples, best, threshold)["false_flags"] <= target:
            return threshold
    return 0.99


def run_thresholds(settings: Settings, bank: QuestionBank, directory: Path = WEIGHTS_DIR) -> int:
    service = ScoringService.from_settings(settings, bank)
    grader = service.warm_grader()
    if grader.stance is None:
        print("error: no stance model for this embedding model: run `python -m bot train stance`")
        return 2
    root = settings.content_dir.parent
    samples = [s for name in TUNING_SETS for s in load_bank_eval(root / name, name).samples]
    everything = Grader(grader.encoder, list(bank), grader.options, _Everything(grader.stance))
    best = best_probabilities(everything, bank, samples)
    flag_at = choose(samples, best, FLAG_TARGET)
    check_at = min(choose(samples, best, CHECK_TARGET), flag_at)
    figures: dict[str, Any] = {
        "sets": [f"content/{name}" for name in TUNING_SETS],
        "answers": len(samples),
        "said": {"at": flag_at} | rates(samples, best, flag_at),
        "worth_checking": {"at": check_at} | rates(samples, best, check_at),
    }
    config = StanceConfig.load(directory)
    replace(
        config, flag_at=flag_at, check_at=check_at, trained=config.trained | {"thresholds": figures}
    ).save(directory)
    print(json.dumps(figures, indent=2))
    service.close()
    return 0
