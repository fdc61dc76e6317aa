"""Which question a daily subscriber gets: no repeats until the level is exhausted, then
unseen questions first, then the ones answered worst."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence

from bot.content.schema import Question


def choose_daily_question(
    candidates: Sequence[Question],
    daily_counts: Mapping[str, int],
    seen: Collection[str],
    best_scores: Mapping[str, float],
    rng: random.Random,
) -> Question | None:
    """daily_counts: how often each question came as a daily one; seen: asked anywhere;
    best_scores: the best grade per answered question (a skipped one counts as 0)."""
    if not candidates:
        return None
    pool = list(candidates)
    rng.shuffle(pool)  # random among equals; the sort below is stable

    def rank(question: Question) -> tuple[int, int, float]:
        was_seen = question.id in seen or question.id in best_scores
        return (
            daily_counts.get(question.id, 0),
            1 if was_seen else 0,
            best_scores.get(question.id, 0.0),
        )

    return min(pool, key=rank)
