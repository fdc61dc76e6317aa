"""Which question a daily subscriber gets: a due spaced-repetition review first (most overdue
first), else no repeats until the level is exhausted, then unseen questions first, then the ones
answered worst."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from bot.content.schema import Question


def choose_daily_question(
    candidates: Sequence[Question],
    daily_counts: Mapping[str, int],
    seen: Collection[str],
    best_scores: Mapping[str, float],
    rng: random.Random,
    due: Mapping[str, datetime] | None = None,
) -> Question | None:
    """daily_counts: how often each question came as a daily one; seen: asked anywhere;
    best_scores: the best grade per answered question (a skipped one counts as 0);
    due: the due time of each question whose review is due."""
    due = due or {}
    if not candidates:
        return None
    pool = list(candidates)
    rng.shuffle(pool)  # random among equals; the sort below is stable

    def rank(question: Question) -> tuple[int, float, int, int, float]:
        was_seen = question.id in seen or question.id in best_scores
        when = due.get(question.id)
        return (
            0 if when is not None else 1,
            when.timestamp() if when is not None else 0.0,
            daily_counts.get(question.id, 0),
            1 if was_seen else 0,
            best_scores.get(question.id, 0.0),
        )

    return min(pool, key=rank)
