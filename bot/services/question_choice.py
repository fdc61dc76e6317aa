"""Which questions an interview asks: due reviews first (most overdue first), then unseen
ones, then the least practised."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime

from bot.content.schema import Question


def choose_questions(
    candidates: Sequence[Question],
    answered: Mapping[str, int],
    count: int,
    rng: random.Random,
    due: Mapping[str, datetime] | None = None,
) -> list[Question]:
    """`answered`: how often each question was answered; `due`: the due time of each question
    whose spaced-repetition review is due now."""
    due = due or {}
    pool = list(candidates)
    rng.shuffle(pool)  # random order within each group, stable grouping below

    def rank(question: Question) -> tuple[int, float, int]:
        when = due.get(question.id)
        if when is not None:
            return (0, when.timestamp(), 0)
        return (1, 0.0, answered.get(question.id, 0))

    pool.sort(key=rank)
    return pool[:count]
