"""Quiz polls go out with plain-text options: the round runner, the bot as `python -m bot run`
builds it (HTML by default), and the fake Bot API, which parses an option as Telegram does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import InputPollOption
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.app import build_bot
from bot.config import load_settings
from bot.content.loader import QuestionBank
from bot.content.schema import Text
from bot.services.rounds import RoundService, StartOutcome
from bot.storage.leases import Leases
from bot.storage.models import RoundQuestion
from bot.storage.statuses import RoundKind
from bot.telegram.limits.groups import GroupLimiter
from bot.telegram.rounds.runner import RoundRunner
from tests.fake_telegram import FakeTelegram
from tests.unit.test_rounds import StubScoring

GROUP = -100_300


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    fake.group(GROUP)
    yield fake
    await fake.stop()


@pytest.fixture
async def bot(telegram: FakeTelegram) -> AsyncIterator[Bot]:
    bot = build_bot(load_settings(bot_token=telegram.token, telegram_api_url=telegram.url))
    yield bot
    await bot.session.close()


def html_unsafe(bank: QuestionBank) -> QuestionBank:
    """The bank with short answers that are malformed as HTML, as code often is."""
    questions = {
        q.id: q.model_copy(
            update={"short_answer": Text(en=f"x < 0 & {q.id}", ru=f"x < 0 и A & B ({q.id})")}
        )
        for q in bank
        if q.short_answer is not None
    }
    return replace(bank, questions=questions)


async def test_the_fake_refuses_an_html_option_as_telegram_does(bot: Bot) -> None:
    options: list[InputPollOption | str] = [
        InputPollOption(text="x < 0"),
        InputPollOption(text="x >= 0"),
    ]
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_poll(GROUP, question="Sign?", options=options)  # HTML by default
    plain: list[InputPollOption | str] = [
        InputPollOption(text=text, text_parse_mode=None) for text in ("x < 0", "x >= 0")
    ]
    message = await bot.send_poll(GROUP, question="Sign?", options=plain)
    assert message.poll is not None and message.poll.options[0].text == "x < 0"


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_quiz_options_with_html_characters_are_posted(
    telegram: FakeTelegram,
    bot: Bot,
    sessions: async_sessionmaker[AsyncSession],
    bank: QuestionBank,
    lang: str,
) -> None:
    rounds = RoundService(sessions, html_unsafe(bank), scoring=StubScoring())  # type: ignore[arg-type]
    await rounds.ensure_group(GROUP, "ML club", lang)
    started = await rounds.start(GROUP, 1, "junior", 1, 30, kind=RoundKind.quiz)
    assert started.outcome is StartOutcome.started
    await RoundRunner(bot, rounds, Leases(sessions), GroupLimiter()).pump(GROUP)

    [poll] = telegram.polls.values()
    texts = [option["text"] for option in poll["options"]]
    assert len(texts) == 4 and all(text.startswith("x < 0 ") for text in texts), texts
    assert any("&" in text for text in texts)
    async with sessions() as session:
        [question] = (await session.scalars(select(RoundQuestion))).all()
    # Posted and recorded, not a refused send's placeholder that skips the question.
    assert question.poll_id == poll["id"] and (question.message_id or 0) > 0
