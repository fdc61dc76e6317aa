"""`python -m bot train stance-thresholds`: when the stance model says "you said this"
(bot/scoring/stance/judge.py): the head's lowest raw logit it reads (`head_floor`), the
P(asserts) it needs (`flag_at`) and the P(asserts) below which it drops the head's own flag
(`veto`), chosen on content/blind, blind8, blind10, blind13 and blind14 to blind21 together for
the highest recall at which at most FLAG_TARGET of the answers that hold no misconception get a
flag and at most REJECT_TARGET of those that reject a pitfall get that pitfall's flag (then the
fewest false flags), and written into the artefact's stance.json with the figures.

On sets whose sentences never train the stance model (content/stance/answers.jsonl holds
content/eval, heldout, blind2 to blind7, blind9, blind11 and blind12): thresholds fitted on its
training sentences would be fitted to what it has learnt by heart. The spent blind sets are shared
out between the two, so that each side sees several writers: content/blind alone (the first 55
questions, an older style) did not carry over to new phrasings (docs/grading.md, sixth attempt),
and the blind sets differ a great deal by writer. The figures on them are in-sample for the
thresholds; those on eval and heldout, printed beside them, are in-sample for the model. Never a
blind set still to be read."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import Sample, load_bank_eval
from bot.evaluation.stance_training import CARD, remember
from bot.scoring.grader import Grader
from bot.scoring.service import ScoringService
from bot.scoring.stance.model import WEIGHTS_DIR, StanceConfig

FLAG_TARGET = (
    0.03  # as the pitfall head's "said" (docs/grading.md): 0.05 is the goal on new answers
)
# The most of the answers that reject a pitfall that may be flagged with it. They are among the
# answers FLAG_TARGET counts, but a twentieth of them: the blind sets read once flagged 7-14 %
# of them (the goal is 5 %) while the false flags overall stayed near target.
REJECT_TARGET = 0.03
HEAD_FLOORS = tuple(f / 10 for f in range(-20, 12))  # -2.0 … 1.1, below the head's own 1.2
VETOES = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9)
# blind14 to blind19 joined on 2026-12-07 (eighteenth attempt): six more writers' sets, spent,
# whose sentences never trained the model (1,463 answers to 3,734); blind20 and blind21 in the
# twentieth attempt (4,490).
THRESHOLD_SETS = ("blind", "blind8", "blind10", "blind13", *(f"blind{n}" for n in range(14, 22)))
TRAINED_SETS = ("eval", "heldout")  # their sentences train the model: figures only
CHUNK = 64


Reading = tuple[str, float, float, float]  # pitfall, head raw logit, gated logit, P(asserts)


def readings(
    grader: Grader, bank: QuestionBank, samples: list[Sample], floor: float
) -> list[list[Reading]]:
    """Per answer: the readings of its candidate sentences (Grader.pair_readings)."""
    result: list[list[Reading]] = []
    for start in range(0, len(samples), CHUNK):
        chunk = samples[start : start + CHUNK]
        jobs = [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in chunk]
        result += grader.pair_readings(jobs, floor)
    return result


def flagged(
    read: list[list[Reading]], head_flag_at: float, floor: float, at: float, veto: float = 0.0
) -> list[dict[str, float]]:
    """Per answer, the pitfalls said (as `best` for `rates`: a flag is a value >= 0.5)."""
    result: list[dict[str, float]] = []
    for r in read:
        said: dict[str, float] = {}
        for pid, logit, gated, p in r:
            hit = (gated >= head_flag_at and p >= veto) or (logit >= floor and p >= at)
            said[pid] = max(said.get(pid, 0.0), float(hit))
        result.append(said)
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


def choose(
    samples: list[Sample], read: list[list[Reading]], head_flag_at: float
) -> tuple[float, float, float]:
    """(head_floor, flag_at, veto) with the highest recall within FLAG_TARGET false flags and
    REJECT_TARGET rejecting answers flagged, then the fewest false flags."""
    best: tuple[tuple[float, float], float, float, float] = ((-1.0, 0.0), HEAD_FLOORS[-1], 1.01, 0)
    for veto in VETOES:
        for floor in HEAD_FLOORS:
            for hundredths in range(50, 100):
                at = hundredths / 100
                figures = rates(samples, flagged(read, head_flag_at, floor, at, veto), 0.5)
                key = (figures["recall"], -figures["false_flags"])
                within = (
                    figures["false_flags"] <= FLAG_TARGET
                    and figures["rejecting_flagged"] <= REJECT_TARGET
                )
                if within and key > best[0]:
                    best = (key, floor, at, veto)
    return best[1], best[2], best[3]


def run_thresholds(settings: Settings, bank: QuestionBank, directory: Path = WEIGHTS_DIR) -> int:
    service = ScoringService.from_settings(settings, bank)
    grader = service.warm_grader()
    if grader.stance is None or grader.head is None:
        print("error: no stance model or pitfall head for this embedding model")
        return 2
    root = settings.content_dir.parent
    head_flag_at = grader.head.flag_at
    by_set = {
        name: load_bank_eval(root / name, name).samples for name in (*THRESHOLD_SETS, *TRAINED_SETS)
    }
    read = {
        name: readings(grader, bank, samples, HEAD_FLOORS[0]) for name, samples in by_set.items()
    }
    pooled = [s for name in THRESHOLD_SETS for s in by_set[name]]
    pooled_read = [r for name in THRESHOLD_SETS for r in read[name]]
    floor, at, veto = choose(pooled, pooled_read, head_flag_at)
    figures: dict[str, Any] = {
        "chosen_on": " and ".join(f"content/{name}" for name in THRESHOLD_SETS),
        "answers": len(pooled),
        "head_floor": floor,
        "flag_at": at,
        "veto": veto,
        # What the choice is judged by, and what a retrained model is compared on.
        "pooled": rates(pooled, flagged(pooled_read, head_flag_at, floor, at, veto), 0.5),
    }
    for name, samples in by_set.items():
        together = flagged(read[name], head_flag_at, floor, at, veto)
        figures[name] = {
            "head_and_stance": rates(samples, together, 0.5),
            "head_alone": rates(samples, flagged(read[name], head_flag_at, floor, 2.0), 0.5),
        }
    config = StanceConfig.load(directory)
    trained = config.trained | {"thresholds": figures}
    stamp = {"date": date.today().isoformat(), "command": "python -m bot train stance-thresholds"}
    remember(CARD, "thresholds", figures | stamp)
    replace(config, flag_at=at, head_floor=floor, veto=veto, trained=trained).save(directory)
    print(json.dumps(figures, indent=2))
    service.close()
    return 0
