"""Runs the real Dispatcher (start_polling over HTTP) against the fake Bot API server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.app import run_polling
from bot.config import load_settings
from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.scoring.service import ScoringService
from tests.fake_telegram import FakeTelegram


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


class BotProcess:
    """The bot as `python -m bot run` builds it, in this event loop, stoppable like a kill."""

    def __init__(
        self, fake: FakeTelegram, db_url: str, scoring: ScoringService, **settings: Any
    ) -> None:
        self.settings = load_settings(
            bot_token=fake.token,
            telegram_api_url=fake.url,
            database_url=db_url,
            polling_timeout=1,
            **settings,
        )
        self.scoring = scoring
        self.task: asyncio.Task[None] | None = None

    async def start(self, fake: FakeTelegram) -> None:
        before = len(fake.sent(method="setMyCommands"))
        self.task = asyncio.create_task(
            run_polling(self.settings, handle_signals=False, scoring=self.scoring)
        )
        await fake.wait_for(lambda s: len(s.sent(method="setMyCommands")) >= before + 4, 60)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None


@pytest.fixture
async def bot(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService
) -> AsyncIterator[BotProcess]:
    process = BotProcess(telegram, db_url, scoring)
    await process.start(telegram)
    yield process
    await process.stop()


def question_messages(fake: FakeTelegram, chat_id: int) -> list[dict[str, Any]]:
    return [
        m
        for m in fake.bot_messages(chat_id)
        if m.get("html", "").startswith(("<b>Question", "<b>Вопрос"))
    ]


def find_question(bank: QuestionBank, message: dict[str, Any]) -> Question:
    for question in bank:
        if question.question.en in message["text"] or question.question.ru in message["text"]:
            return question
    raise AssertionError(f"no bank question in {message['text']!r}")


async def wait_text(
    fake: FakeTelegram, chat_id: int, needle: str, after: int = 0
) -> dict[str, Any]:
    """The first bot message after index `after` whose text contains `needle`."""

    def found(s: FakeTelegram) -> dict[str, Any] | None:
        for message in s.bot_messages(chat_id)[after:]:
            if needle in message["text"]:
                return message
        return None

    return await fake.wait_for(found, 60)
