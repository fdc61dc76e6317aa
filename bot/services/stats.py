"""Usage figures for the bot's operators (`/stats` for ADMIN_IDS, `python -m bot stats`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import utcnow
from bot.storage.usage_stats import BotStats, QuestionScore, collect_stats

__all__ = ["BotStats", "QuestionScore", "StatsService"]


class StatsService:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def collect(self, now: datetime | None = None) -> BotStats:
        async with self._sessions() as session:
            return await collect_stats(session, now or utcnow())
