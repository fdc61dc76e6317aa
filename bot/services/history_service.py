"""A person's own records, as one service the handlers are given: read back (`/export`) and
deleted (`/forget`). What is read and what is deleted are bot/services/history.py and
bot/services/forget.py; this holds the database and the bank they need, so that no handler
borrows them from another service."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.content.schema import Language
from bot.services.forget import forget_user
from bot.services.history import HistoryRow, history, history_csv


@dataclass(frozen=True)
class HistoryExport:
    """`/export`'s document: the CSV of the user's answers, and how many rows it holds."""

    document: bytes
    rows: int


class HistoryService:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], bank: QuestionBank):
        self._sessions = sessions
        self._bank = bank

    async def history(self, user_id: int, lang: Language) -> list[HistoryRow]:
        """The user's answers and quiz votes, oldest first, questions in `lang`."""
        return await history(self._sessions, self._bank, user_id, lang)

    async def export(self, user_id: int, lang: Language) -> HistoryExport | None:
        """The user's answers as a CSV document; None: nothing to export."""
        rows = await self.history(user_id, lang)
        if not rows:
            return None
        return HistoryExport(history_csv(rows), len(rows))

    async def forget(self, user_id: int, current_update: int | None = None) -> None:
        """Everything kept about the user, deleted (bot/services/forget.py); `current_update`:
        the update being handled (the confirmation), redacted too."""
        await forget_user(self._sessions, user_id, current_update)
