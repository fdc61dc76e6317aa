"""What every part of the daily service shares: its collaborators, the clock and the grace."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock, aware, utcnow
from bot.content.loader import QuestionBank

DEFAULT_GRACE = timedelta(hours=3)


class DailyBase:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        bank: QuestionBank,
        clock: Clock = utcnow,
        grace: timedelta = DEFAULT_GRACE,
        rng: random.Random | None = None,
    ):
        self.sessions = sessions
        self.bank = bank
        self.clock = clock
        self.grace = grace
        self.rng = rng or random.Random()

    def now(self) -> datetime:
        return aware(self.clock()).astimezone(UTC)
