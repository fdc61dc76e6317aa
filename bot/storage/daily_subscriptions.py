"""Daily subscriptions and the delivery history a streak is counted from: queries over one
session, never committing (the daily service owns the transaction)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.daily_deliveries import SUBSCRIPTIONS
from bot.storage.models import AskedQuestion, DailyDelivery, DailySubscription
from bot.storage.results import rowcount
from bot.storage.statuses import AskStatus, DeliveryStatus

STREAK_DAYS_READ = 400  # a streak longer than this many delivery days is not counted further


class SubscriptionRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    async def get(self, user_id: int) -> DailySubscription | None:
        return await self.session.get(DailySubscription, user_id)

    def add(self, sub: DailySubscription) -> None:
        self.session.add(sub)

    async def stop(
        self, user_id: int, reason: str | None, now: datetime, *, only_active: bool = True
    ) -> bool:
        """Deactivate; True when a row changed (with `only_active`, an active one)."""
        stmt = update(SUBSCRIPTIONS).where(SUBSCRIPTIONS.c.user_id == user_id)
        if only_active:
            stmt = stmt.where(SUBSCRIPTIONS.c.active.is_(True))
        result = await self.session.execute(
            stmt.values(active=False, stopped_reason=reason, updated_at=now)
        )
        return rowcount(result) == 1

    async def dates_with_rows(self, user_id: int, since: str) -> set[str]:
        """Local dates from `since` (ISO, so they sort as text) that have a delivery row."""
        rows = await self.session.scalars(
            select(DailyDelivery.local_date).where(
                DailyDelivery.user_id == user_id, DailyDelivery.local_date >= since
            )
        )
        return set(rows.all())

    async def recent_days(
        self, user_id: int
    ) -> Sequence[tuple[str, DeliveryStatus, AskStatus | None]]:
        """(local date, delivery status, its ask's status) per delivery day, latest first."""
        rows = await self.session.execute(
            select(DailyDelivery.local_date, DailyDelivery.status, AskedQuestion.status)
            .outerjoin(AskedQuestion, AskedQuestion.id == DailyDelivery.ask_id)
            .where(DailyDelivery.user_id == user_id)
            .order_by(DailyDelivery.local_date.desc())
            .limit(STREAK_DAYS_READ)
        )
        return [(day, status, ask) for day, status, ask in rows]

    async def subscriber_of_ask(self, ask_id: int) -> int | None:
        """The user whose daily delivery this ask is, or None (not a daily question)."""
        user_id = await self.session.scalar(
            select(DailyDelivery.user_id).where(DailyDelivery.ask_id == ask_id)
        )
        return None if user_id is None else int(user_id)
