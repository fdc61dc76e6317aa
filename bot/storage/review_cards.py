"""Review cards (spaced repetition): what is due, and when. Queries over one session; the FSRS
scheduling that writes the cards is bot/services/reviews.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.clock import aware
from bot.storage.models import ReviewCard


async def due_questions(
    session: AsyncSession, user_id: int, now: datetime, among: Sequence[str] | None = None
) -> dict[str, datetime]:
    """Question id -> due time of the user's reviews due at `now`, most overdue first;
    `among`: only these questions (an interview's level)."""
    stmt = select(ReviewCard.question_id, ReviewCard.due).where(
        ReviewCard.user_id == user_id, ReviewCard.due <= now
    )
    if among is not None:
        stmt = stmt.where(ReviewCard.question_id.in_(among))
    rows = await session.execute(stmt.order_by(ReviewCard.due, ReviewCard.question_id))
    return {qid: aware(due) for qid, due in rows.all()}


async def due_for_users(
    session: AsyncSession, user_ids: Sequence[int], now: datetime
) -> dict[int, dict[str, datetime]]:
    """due_questions for several users in one query (the daily queue prepares a batch)."""
    found: dict[int, dict[str, datetime]] = {uid: {} for uid in user_ids}
    if not user_ids:
        return found
    rows = await session.execute(
        select(ReviewCard.user_id, ReviewCard.question_id, ReviewCard.due)
        .where(ReviewCard.user_id.in_(user_ids), ReviewCard.due <= now)
        .order_by(ReviewCard.due, ReviewCard.question_id)
    )
    for uid, qid, due in rows.all():
        found[uid][qid] = aware(due)
    return found


async def next_due(session: AsyncSession, user_id: int, after: datetime) -> datetime | None:
    """When the user's next review falls due after `after`; None: no reviews at all."""
    found = await session.scalar(
        select(func.min(ReviewCard.due)).where(
            ReviewCard.user_id == user_id, ReviewCard.due > after
        )
    )
    return aware(found) if found is not None else None


async def due_within(session: AsyncSession, user_id: int, now: datetime, span: timedelta) -> int:
    """How many of the user's reviews are due by `now + span` (those due already included)."""
    count = await session.scalar(
        select(func.count())
        .select_from(ReviewCard)
        .where(ReviewCard.user_id == user_id, ReviewCard.due <= now + span)
    )
    return int(count or 0)
