"""Shared by the daily e2e tests: a movable clock, the bot with it, and subscribers in bulk."""

from __future__ import annotations

import random
from collections.abc import Coroutine
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import select

from bot.app import run_bot
from bot.config import load_settings
from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.services.daily import DailyService
from bot.services.interviews import InterviewService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import DailyDelivery, DailySubscription
from tests.e2e.conftest import BotProcess
from tests.fake_telegram import FakeTelegram

DAILY_HEADERS = ("<b>Daily question", "<b>Вопрос дня")


class Clock:
    """An injected clock: aware UTC datetimes that a test moves by hand."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, *args: int) -> None:
        self.now = datetime(*args, tzinfo=UTC)  # type: ignore[misc]

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class DailyBot(BotProcess):
    """The bot as run_bot builds it, with the daily scheduler on an injected clock."""

    def __init__(
        self,
        fake: FakeTelegram,
        db_url: str,
        scoring: ScoringService,
        clock: Clock,
        **settings: Any,
    ):
        super().__init__(fake, db_url, scoring)
        self.settings = load_settings(
            bot_token=fake.token,
            telegram_api_url=fake.url,
            database_url=db_url,
            polling_timeout=1,
            daily_tick_seconds=settings.pop("daily_tick_seconds", 0.05),
            **settings,
        )
        self.clock = clock

    def _run(self) -> Coroutine[Any, Any, None]:
        return run_bot(self.settings, handle_signals=False, scoring=self.scoring, clock=self.clock)


def daily_messages(fake: FakeTelegram, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in fake.bot_messages(chat_id) if m.get("html", "").startswith(DAILY_HEADERS)]


def daily_counts(fake: FakeTelegram, chat_ids: list[int]) -> dict[int, int]:
    return {c: len(daily_messages(fake, c)) for c in chat_ids}


async def subscribe_many(
    db_url: str,
    bank: QuestionBank,
    fake: FakeTelegram,
    user_ids: list[int],
    at: time,
    tz: str,
    clock: Clock,
) -> None:
    """Subscribers straight in the database (what /daily would store), chats in the fake."""
    engine = create_engine(db_url)
    sessions = create_session_factory(engine)
    interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
    daily = DailyService(sessions, bank, clock=clock, rng=random.Random(5))
    for uid in user_ids:
        fake.user(uid)
        await interviews.ensure_user(uid, "en")
        await daily.subscribe(uid, uid, at, tz)
    await engine.dispose()


async def deliveries(db_url: str) -> list[DailyDelivery]:
    engine = create_engine(db_url)
    async with create_session_factory(engine)() as session:
        rows = list((await session.scalars(select(DailyDelivery))).all())
    await engine.dispose()
    return rows


async def subscription(db_url: str, user_id: int) -> DailySubscription | None:
    engine = create_engine(db_url)
    async with create_session_factory(engine)() as session:
        sub = await session.get(DailySubscription, user_id)
    await engine.dispose()
    return sub
