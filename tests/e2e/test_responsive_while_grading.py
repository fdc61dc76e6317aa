"""The event loop stays free while the model grades: /help is answered mid-burst.

The bot here grades as `python -m bot run` does (GRADER_WORKER=process, GRADER_THREADS=0), not
with the suite's shared in-process model: with the model in a thread on two busy cores, the
loop could wait as long as the whole batch.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.content.loader import QuestionBank
from bot.scoring.host_config import HostConfig
from bot.scoring.service import ScoringService
from tests.e2e.conftest import BotProcess, find_question, question_messages
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e

USERS = range(1000, 1064)


@pytest.fixture
async def serving_bot(
    telegram: FakeTelegram, db_url: str, bank: QuestionBank, vector_cache: Path
) -> AsyncIterator[BotProcess]:
    scoring = ScoringService(
        bank, HostConfig("bundled", "cpu", cache_dir=vector_cache, threads=0), worker="process"
    )
    await scoring.start(warm=True)
    process = BotProcess(telegram, db_url, scoring)
    await process.start(telegram)
    yield process
    await process.stop()
    scoring.close()


def _feedback_count(fake: FakeTelegram) -> int:
    return sum(
        1 for chat in USERS for m in fake.bot_messages(chat) if m["text"].startswith("Score: ")
    )


async def test_help_is_answered_while_64_answers_are_graded(
    telegram: FakeTelegram, serving_bot: BotProcess, bank: QuestionBank
) -> None:
    for chat in USERS:
        telegram.send_text(telegram.user(chat), "/interview middle 1")
    await telegram.wait_for(lambda s: all(question_messages(s, c) for c in USERS))
    for chat in USERS:
        question = find_question(bank, question_messages(telegram, chat)[0])
        telegram.send_text(telegram.user(chat), question.answer.en)  # long answers: slow to grade
    sent = time.monotonic()
    helper = telegram.user(2000)
    telegram.send_text(helper, "/help")
    await telegram.wait_for(lambda s: s.bot_messages(2000))
    help_after = time.monotonic() - sent
    graded_before_help = _feedback_count(telegram)
    await telegram.wait_for(lambda s: _feedback_count(s) == len(USERS))
    grading_took = time.monotonic() - sent
    # Generous bounds: the figure itself is in `python -m bot bench`.
    assert help_after < 10, f"/help took {help_after:.1f} s"
    assert graded_before_help < len(USERS), (
        f"/help came only after all feedback ({help_after:.1f} s vs {grading_took:.1f} s)"
    )
