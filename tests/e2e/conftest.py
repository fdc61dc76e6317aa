"""Runs the real Dispatcher (start_polling over HTTP) against the fake Bot API server."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import run_bot
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


@pytest.fixture(scope="session", autouse=True)
def warm_children(scoring: ScoringService, vector_cache: Path) -> Iterator[None]:
    """`python -m bot run` children read the bank's vectors that `scoring` computed (or read)
    before the first test, so they start warm too: same model, device and bank, same file."""
    saved = {key: os.environ.get(key) for key in CHILD_ENV}
    os.environ.update(CHILD_ENV, EMBEDDING_CACHE_DIR=str(vector_cache))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


CHILD_ENV = {"EMBEDDING_CACHE_DIR": "", "EMBEDDING_DEVICE": "cpu", "EMBEDDING_MODEL": "bundled"}
READY = 900.0  # only a guard against a hang: start-up ends when the bot is ready, or dies


async def wait_ready(fake: FakeTelegram, before: int, end: asyncio.Future[Any]) -> bool:
    """Until the bot has set its four command menus (it polls then): True; or until `end` (the
    bot's task or process) finishes first: False."""
    ready = asyncio.ensure_future(
        fake.wait_for(lambda s: len(s.sent(method="setMyCommands")) >= before + 4, READY)
    )
    await asyncio.wait({ready, end}, return_when=asyncio.FIRST_COMPLETED)
    if ready.done():
        ready.result()  # TimeoutError after READY: a hang
        return True
    ready.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await ready
    return False


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

    def _run(self) -> Coroutine[Any, Any, None]:
        return run_bot(self.settings, handle_signals=False, scoring=self.scoring)

    async def start(self, fake: FakeTelegram) -> None:
        """Returns once the bot is ready: tests start their clocks after this."""
        before = len(fake.sent(method="setMyCommands"))
        task = self.task = asyncio.create_task(self._run())
        if not await wait_ready(fake, before, task):
            task.result()  # the start-up error, if there was one
            raise AssertionError("the bot stopped during start-up")

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


@pytest.fixture
async def group_bot(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BotProcess]:
    """The bot for group-round tests: short deadlines and a fast tick keep them quick; the
    group message budget stays Telegram's."""
    monkeypatch.setenv("ROUND_MIN_SECONDS", "1")
    monkeypatch.setenv("ROUND_TICK", "0.2")
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

    return await fake.wait_for(found)
