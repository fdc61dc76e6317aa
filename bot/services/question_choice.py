"""Which questions an interview asks: unseen ones first, then the least practised."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from bot.content.schema import Question


def choose_questions(
    candidates: Sequence[Question],
    answered: Mapping[str, int],
    count: int,
    rng: random.Random,
) -> list[Question]:
    pool = list(candidates)
    rng.shuffle(pool)  # random order within each group, stable grouping below
    pool.sort(key=lambda q: answered.get(q.id, 0))
    return pool[:count]
