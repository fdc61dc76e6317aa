"""`python -m bot train relevance-thresholds`: chooses how the grader joins the relevance model to
its vector rule (bot/scoring/relevance_net/judge.py: `other_at`, `lean`, `veto`, and the
comparison with the closest other question: `nearest_at`, `nearest_lean`), on sets the model
never trained on, and writes them into the artefact's config and the model card.

The choice: the most off-topic answers told, with no more than WRONG_TARGET of the other answers
(any kind but off-topic and "don't know") told; ties go to the more cautious values. The sets
are tuning sets for this choice from then on, and their figures are published as such.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import load_bank_eval
from bot.evaluation.relevance_training import CARD, remember
from bot.scoring.relevance import Neighbour
from bot.scoring.relevance_net.judge import answered_instead
from bot.scoring.relevance_net.model import WEIGHTS_DIR, RelevanceConfig
from bot.scoring.relevance_net.pairs import NO_ANSWER, OFF_TOPIC
from bot.scoring.service import ScoringService

THRESHOLD_SETS = ("heldout", "blind", "blind7", "blind8")
WRONG_TARGET = 0.0025  # of on-topic answers: 1 in 400 told it answers another question
OTHER_AT = (0.8, 0.85, 0.9, 0.95, 0.98)
LEAN = (0.0, 0.05, 0.1, 0.15)
VETO = (0.0, 0.1, 0.2)
# The comparison with the closest other question (judge.py); -1.0: off.
NEAREST_AT = (-1.0, 0.01, 0.02, 0.05, 0.1, 0.2)
NEAREST_LEAN = (0.05, 0.08, 0.1, 0.12, 0.15)

# kind, the vector profile's comparison, P(other) with its own question, with the closest other
Reading = tuple[str, Neighbour, float, float | None]


@dataclass(frozen=True)
class Choice:
    other_at: float
    lean: float
    veto: float
    nearest_at: float = -1.0
    nearest_lean: float = 1.0


def counts(rows: list[Reading], c: Choice) -> dict[str, int]:
    def told(row: Reading, model: bool = True) -> bool:
        _, neighbour, other_p, nearest_p = row
        p = other_p if model else None
        return (
            answered_instead(
                neighbour,
                p,
                c.other_at,
                c.lean,
                c.veto,
                nearest_p if model else None,
                c.nearest_at,
                c.nearest_lean,
            )
            is not None
        )

    def by_nearest(row: Reading) -> bool:
        _, neighbour, _, nearest_p = row
        return (
            nearest_p is not None
            and nearest_p <= c.nearest_at
            and neighbour.whole_margin >= c.nearest_lean
        )

    off = [r for r in rows if r[0] == OFF_TOPIC]
    on = [r for r in rows if r[0] != OFF_TOPIC]
    return {
        "off_topic": len(off),
        "on_topic": len(on),
        "off_topic_told": sum(told(r) for r in off),
        "on_topic_told": sum(told(r) for r in on),
        "rule_off_topic_told": sum(told(r, model=False) for r in off),
        "rule_on_topic_told": sum(told(r, model=False) for r in on),
        "model_off_topic_told": sum(r[2] >= c.other_at for r in off),
        "model_on_topic_told": sum(r[2] >= c.other_at for r in on),
        "nearest_off_topic_told": sum(by_nearest(r) for r in off),
        "nearest_on_topic_told": sum(by_nearest(r) for r in on),
    }


def choose(rows: list[Reading]) -> Choice:
    """The most off-topic answers told within the budget of on-topic ones told. Where no choice
    keeps to it (the vector rule alone can tell more, and no veto reaches those), the budget is
    the fewest any choice tells, rather than the most cautious values whatever they tell."""
    on_topic = sum(r[0] != OFF_TOPIC for r in rows)
    scored: list[tuple[dict[str, int], Choice]] = []
    for other_at, lean, veto, nearest_at, nearest_lean in itertools.product(
        OTHER_AT, LEAN, VETO, NEAREST_AT, NEAREST_LEAN
    ):
        if nearest_at < 0 and nearest_lean != NEAREST_LEAN[-1]:
            continue  # off: one lean stands for all
        choice = Choice(other_at, lean, veto, nearest_at, nearest_lean)
        scored.append((counts(rows, choice), choice))
    budget = max(WRONG_TARGET * on_topic, min(c["on_topic_told"] for c, _ in scored))
    best: tuple[tuple[float, ...], Choice] | None = None
    for c, choice in scored:
        if c["on_topic_told"] > budget:
            continue
        # Ties go to the more cautious values: the comparison off, or needing more.
        key = (
            c["off_topic_told"],
            -c["on_topic_told"],
            choice.other_at,
            choice.lean,
            -choice.veto,
            -choice.nearest_at,
            choice.nearest_lean,
        )
        if best is None or key > best[0]:
            best = (key, choice)
    assert best is not None  # the budget admits at least the choice that set it
    return best[1]


def run_relevance_thresholds(settings: Settings, bank: QuestionBank) -> int:
    service = ScoringService.from_settings(settings, bank)
    grader = service.warm_grader()
    if grader.relevance is None:
        print("error: no relevance model for this EMBEDDING_MODEL: `python -m bot train relevance`")
        return 2
    root = settings.content_dir.parent
    per_set: dict[str, list[Reading]] = {}
    for name in THRESHOLD_SETS:
        samples = [
            s
            for s in load_bank_eval(root / name, name).samples
            if s.kind != NO_ANSWER and s.group in bank.questions
        ]
        readings = grader.relevance_readings(
            [(bank.questions[s.group], s.answer, s.lang) for s in samples], min(NEAREST_LEAN)
        )
        per_set[name] = [
            (s.kind or "", neighbour, other_p, nearest_p)
            for s, (neighbour, other_p, nearest_p) in zip(samples, readings, strict=True)
            if neighbour is not None and other_p is not None
        ]
    service.close()
    choice = choose([r for rows in per_set.values() for r in rows])
    figures: dict[str, Any] = {
        "date": date.today().isoformat(),
        "command": "python -m bot train relevance-thresholds",
        **asdict(choice),
        "wrong_target": WRONG_TARGET,
        "sets": {name: counts(rows, choice) for name, rows in per_set.items()},
    }
    config = RelevanceConfig.load(WEIGHTS_DIR)
    replace(config, **asdict(choice)).save(WEIGHTS_DIR)
    remember(CARD, "thresholds", figures)
    print(json.dumps(figures, indent=2))
    return 0
