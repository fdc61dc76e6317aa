"""`python -m bot run` as a real process: a daily question arrives at a real minute ahead."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.content.loader import QuestionBank
from tests.e2e.conftest import find_question, wait_text
from tests.e2e.daily_helpers import daily_messages, deliveries
from tests.e2e.processes import launch, terminate
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e


async def test_run_delivers_a_daily_question_at_the_minute(
    telegram: FakeTelegram, bank: QuestionBank, tmp_path: Path
) -> None:
    log = tmp_path / "bot.log"
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    process = await launch(telegram, db_url, log, {"DAILY_TICK_SECONDS": "1"})
    try:
        now = datetime.now(UTC)
        due = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        if (due - now).total_seconds() < 6:
            due += timedelta(minutes=1)
        user = telegram.user(31, "ru", "Иван")
        while True:  # the next minute, unless the reply came too late for it: then the one after
            count = len(telegram.bot_messages(31))
            telegram.send_text(user, f"/daily {due:%H:%M} UTC")
            await wait_text(telegram, 31, "Готово!", after=count)
            if datetime.now(UTC) < due - timedelta(seconds=3):
                break
            due += timedelta(minutes=1)
        assert not daily_messages(telegram, 31)

        daily = (await telegram.wait_for(lambda s: daily_messages(s, 31)))[0]
        arrived = datetime.now(UTC)
        assert due <= arrived < due + timedelta(seconds=60), (due, arrived)
        assert daily["text"].startswith("Вопрос дня · junior")
        question = find_question(bank, daily)
        # The bot records the send a few milliseconds after Telegram accepted it; a person
        # cannot answer that fast, a test can: wait for the record first.
        for _ in range(100):
            if [r for r in await deliveries(db_url) if r.status == "sent"]:
                break
            await asyncio.sleep(0.1)
        count = len(telegram.bot_messages(31))
        telegram.send_text(user, question.answer.ru, reply_to=daily["message_id"])
        try:
            await wait_text(telegram, 31, "Оценка: ", after=count)
        except TimeoutError:
            sent = [m["text"][:200] for m in telegram.bot_messages(31)[count:]]
            raise AssertionError(f"{sent}\n{log.read_text()[-3000:]}") from None
        await wait_text(telegram, 31, "Серия: 1 день подряд", after=count)
        assert len(daily_messages(telegram, 31)) == 1
    finally:
        await terminate(process)
    assert "Traceback" not in log.read_text()
