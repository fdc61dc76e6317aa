"""Spaced repetition with FSRS v6 (the `fsrs` package): when each question comes back.

Every graded answer, private or in a group round, is a review of that question for that person,
and a skipped question is a failed one. The card state lives in `review_cards`; these functions
run inside the caller's transaction, so a review is stored together with the grade it comes
from and is never counted twice.
"""

from __future__ import annotations

from datetime import datetime

from fsrs import Card, Rating, Scheduler, State
from sqlalchemy.ext.asyncio import AsyncSession

from bot.clock import aware
from bot.storage.models import ReviewCard
from bot.storage.review_cards import due_for_users, due_questions, due_within, next_due

__all__ = [
    "bring_forward",
    "due_for_users",
    "due_questions",
    "due_within",
    "next_due",
    "rating_for",
    "record_review",
]

# FSRS's defaults: 90% target recall and its short-term learning steps (1 and 10 minutes), so a
# question failed now comes back within the same sitting. No fuzzing: with a 55-question bank
# there are no review pile-ups to spread, and a fixed schedule is easier to explain and test.
SCHEDULER = Scheduler(enable_fuzzing=False)


def rating_for(score: float | None) -> Rating:
    """The grade as an FSRS rating, band for band with the verdict the user sees: weak or no
    answer (< 4) is Again (not recalled), partial (< 7) Hard (recalled with gaps), good (< 8.5)
    Good, excellent Easy. None (skipped, or the question left the bank) is Again."""
    if score is None or score < 4.0:
        return Rating.Again
    if score < 7.0:
        return Rating.Hard
    if score < 8.5:
        return Rating.Good
    return Rating.Easy


def _card(row: ReviewCard) -> Card:
    return Card(
        card_id=0,  # unused: the row's key identifies it
        state=State(row.state),
        step=row.step,
        stability=row.stability,
        difficulty=row.difficulty,
        due=aware(row.due),
        last_review=aware(row.last_review),
    )


async def record_review(
    session: AsyncSession, user_id: int, question_id: str, score: float | None, when: datetime
) -> ReviewCard:
    """One review of `question_id` by `user_id` at `when` (aware UTC); score None: skipped."""
    row = await session.get(ReviewCard, (user_id, question_id))
    rating = rating_for(score)
    card = Card(card_id=0, due=when) if row is None else _card(row)
    card, _ = SCHEDULER.review_card(card, rating, review_datetime=when)
    if row is None:
        row = ReviewCard(user_id=user_id, question_id=question_id, reviews=0, lapses=0)
        session.add(row)
    row.state, row.step = int(card.state), card.step
    row.stability, row.difficulty = card.stability, card.difficulty
    row.due, row.last_review = card.due, card.last_review
    row.reviews = (row.reviews or 0) + 1
    row.lapses = (row.lapses or 0) + (1 if rating == Rating.Again else 0)
    return row


async def bring_forward(
    session: AsyncSession, user_id: int, question_id: str, now: datetime
) -> bool:
    """Make `question_id` due for review at `now` ("ask me that question later"): a question
    never reviewed gets a new card, one not due yet is due now; its FSRS history is kept.
    False: it was due already."""
    row = await session.get(ReviewCard, (user_id, question_id))
    if row is None:
        card = Card(card_id=0, due=now)  # FSRS's new card: learning, first step
        session.add(
            ReviewCard(
                user_id=user_id,
                question_id=question_id,
                state=int(card.state),
                step=card.step,
                stability=None,
                difficulty=None,
                due=now,
                last_review=None,
                reviews=0,
                lapses=0,
            )
        )
        return True
    if aware(row.due) <= now:
        return False
    row.due = now
    return True
