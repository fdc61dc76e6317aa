"""What every part of the round service shares: its collaborators, the clock, and two helpers."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock, utcnow
from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.services.quiz import build_options
from bot.services.rounds.args import MIN_SECONDS
from bot.storage.models import Round, RoundQuestion
from bot.storage.statuses import RoundKind

T = TypeVar("T")


class RoundsBase:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        bank: QuestionBank,
        scoring: ScoringService,
        clock: Clock = utcnow,
        rng: random.Random | None = None,
        min_seconds: int = MIN_SECONDS,
    ):
        self.sessions = sessions
        self.bank = bank
        self.scoring = scoring
        self.clock = clock
        self.rng = rng or random.Random()
        self.min_seconds = min_seconds
        self.started_at = clock()

    def _ask(self, session: AsyncSession, round_: Round) -> None:
        """Put the round's current question (at `round_.position`); quiz options are drawn now."""
        question_id = round_.question_ids[round_.position]
        rq = RoundQuestion(
            round_id=round_.id,
            chat_id=round_.chat_id,
            position=round_.position,
            question_id=question_id,
        )
        question = self.bank.get(question_id)
        if round_.kind == RoundKind.quiz and question is not None:
            rq.options, rq.correct_option = build_options(question, self.bank, self.rng)
        session.add(rq)


async def once_more_on_conflict(action: Callable[[], Awaitable[T]]) -> T:
    """Two first updates from one group can race to create its row; the loser reads it."""
    try:
        return await action()
    except IntegrityError:
        return await action()
