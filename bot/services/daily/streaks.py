"""Streaks: consecutive days with the daily question answered."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.daily_subscriptions import SubscriptionRepo
from bot.storage.statuses import AskStatus, DeliveryStatus


def _adjacent(earlier: str, later: str) -> bool:
    """Consecutive delivery days: nothing but a weekend between them."""
    day, end = date.fromisoformat(earlier) + timedelta(days=1), date.fromisoformat(later)
    while day < end:
        if day.weekday() < 5:
            return False
        day += timedelta(days=1)
    return day == end


async def streak(session: AsyncSession, user_id: int) -> int:
    """Consecutive days with the daily question answered, counting back from the latest.

    Today's question still open does not break it; a day the bot failed to deliver is neutral.
    """
    rows = await SubscriptionRepo(session).recent_days(user_id)
    count, later = 0, None
    for index, (day, status, ask_status) in enumerate(rows):
        if later is not None and not _adjacent(day, later):
            break
        if status == DeliveryStatus.sent:
            if ask_status == AskStatus.answered:
                count += 1
            elif not (index == 0 and ask_status in (AskStatus.open, AskStatus.grading)):
                break  # a question left unanswered (today's may still be answered)
        # Rows still in flight, and days the bot failed to deliver, are neutral.
        later = day
    return count


async def daily_streak_for_ask(session: AsyncSession, ask_id: int) -> int | None:
    """The streak to show with feedback, if this ask is a daily question (else None)."""
    user_id = await SubscriptionRepo(session).subscriber_of_ask(ask_id)
    return None if user_id is None else await streak(session, user_id)
