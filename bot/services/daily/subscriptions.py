"""Daily subscriptions: subscribe (time, timezone), unsubscribe, change, and the view of one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time

from sqlalchemy.ext.asyncio import AsyncSession

from bot.clock import aware
from bot.content.schema import Level
from bot.services.daily.base import DailyBase
from bot.services.daily.streaks import streak
from bot.services.schedule import local_date, next_due, parse_time, parse_timezone
from bot.storage.daily_subscriptions import SubscriptionRepo
from bot.storage.models import DailySubscription, User


@dataclass(frozen=True)
class SubscriptionView:
    user_id: int
    chat_id: int
    local_time: str
    timezone: str
    level: Level  # effective: the subscription's, else the user's
    own_level: bool  # the subscription fixes its level
    weekdays_only: bool
    active: bool
    next_due_at: datetime | None
    streak: int
    timezone_given: bool = True  # False: defaulted to UTC on this call (hint the user)


class SubscriptionsMixin(DailyBase):
    async def subscribe(
        self, user_id: int, chat_id: int, at: time, tz: str | None
    ) -> SubscriptionView:
        """Subscribe or change the time; `tz` None keeps the remembered timezone (else UTC).
        Raises ScheduleError for a timezone parse_timezone does not accept."""
        now = self.now()
        tz = parse_timezone(tz) if tz is not None else None
        async with self.sessions() as session, session.begin():
            subs = SubscriptionRepo(session)
            sub = await subs.get(user_id)
            given = tz is not None or sub is not None
            if sub is None:
                sub = DailySubscription(user_id=user_id, timezone=tz or "UTC")
                subs.add(sub)
            elif tz is not None:
                sub.timezone = tz
            sub.chat_id = chat_id
            sub.local_time = at.strftime("%H:%M")
            sub.active, sub.stopped_reason, sub.updated_at = True, None, now
            if sub.weekdays_only is None:
                sub.weekdays_only = False
            sub.next_due_at = await _next_free_due(
                session, user_id, now, at, sub.timezone, bool(sub.weekdays_only)
            )
            await session.flush()
            view = await self._view(session, sub)
        return SubscriptionView(**{**view.__dict__, "timezone_given": given})

    async def unsubscribe(self, user_id: int, reason: str | None = None) -> bool:
        async with self.sessions() as session, session.begin():
            return await SubscriptionRepo(session).stop(user_id, reason, self.now())

    async def view(self, user_id: int) -> SubscriptionView | None:
        async with self.sessions() as session:
            sub = await SubscriptionRepo(session).get(user_id)
            return await self._view(session, sub) if sub is not None else None

    async def update(
        self, user_id: int, *, level: Level | None = None, weekdays_only: bool | None = None
    ) -> SubscriptionView | None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            sub = await SubscriptionRepo(session).get(user_id)
            if sub is None:
                return None
            if level is not None:
                sub.level = Level(level)
            if weekdays_only is not None:
                sub.weekdays_only = weekdays_only
                if sub.active:
                    sub.next_due_at = await _next_free_due(
                        session,
                        user_id,
                        now,
                        parse_time(sub.local_time),
                        sub.timezone,
                        weekdays_only,
                    )
            sub.updated_at = now
            await session.flush()
            return await self._view(session, sub)

    async def _view(self, session: AsyncSession, sub: DailySubscription) -> SubscriptionView:
        user = await session.get(User, sub.user_id)
        level = sub.level or (user.level if user else Level.junior)
        return SubscriptionView(
            user_id=sub.user_id,
            chat_id=sub.chat_id,
            local_time=sub.local_time,
            timezone=sub.timezone,
            level=level,
            own_level=sub.level is not None,
            weekdays_only=bool(sub.weekdays_only),
            active=bool(sub.active),
            next_due_at=aware(sub.next_due_at) if sub.next_due_at and sub.active else None,
            streak=await streak(session, sub.user_id),
        )


async def _next_free_due(
    session: AsyncSession, user_id: int, now: datetime, at: time, tz: str, weekdays_only: bool
) -> datetime:
    """The first due time after `now` on a local date that has no delivery row yet.

    materialize inserts one row per (user, local date) with ON CONFLICT DO NOTHING, so a date
    that already has one (today's question came, or failed) gets nothing more: naming it would
    promise a delivery the scheduler never makes."""
    due = next_due(now, at, tz, weekdays_only)
    taken = await SubscriptionRepo(session).dates_with_rows(user_id, local_date(due, tz))
    while local_date(due, tz) in taken:  # ends: the dates only grow, the taken ones are few
        due = next_due(due, at, tz, weekdays_only)
    return due
