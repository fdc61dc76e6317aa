"""`/progress` and `/report` (and `python -m bot progress`) as one service: a person's figures
and readiness, read from their history as of the service's clock. The figures themselves are
bot/services/progress.py and bot/services/readiness.py; this holds the database, the bank and
the clock they need, so that no handler borrows them from another service."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock, utcnow
from bot.content.loader import QuestionBank
from bot.content.schema import Language, Level
from bot.services.progress import ProgressSummary, load_progress
from bot.services.readiness import ReadinessReport, load_readiness


class ProgressService:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        bank: QuestionBank,
        clock: Clock = utcnow,
    ):
        """`clock`: the interviews' clock (tests move it), so that "today" of the streak is the
        day the answers were graded on."""
        self._sessions = sessions
        self._bank = bank
        self._clock = clock

    async def progress(self, user_id: int, lang: Language) -> ProgressSummary:
        """`/progress`: scores over time, per level and topic, the streak up to today (UTC)."""
        today = self._clock().date()
        return await load_progress(self._sessions, self._bank, user_id, lang, today)

    async def readiness(self, user_id: int, lang: Language, level: Level) -> ReadinessReport:
        """`/report`: readiness per topic and level, and what to practise next at `level`."""
        return await load_readiness(self._sessions, self._bank, user_id, lang, level)
