"""`python -m bot run` as a real process against the fake Bot API, killed mid-interview."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from bot.content.loader import QuestionBank
from tests.e2e.conftest import find_question, question_messages, wait_text
from tests.e2e.processes import launch, terminate, until_ready
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e


async def test_run_completes_interviews_in_both_languages_across_a_kill(
    telegram: FakeTelegram, bank: QuestionBank, tmp_path: Path
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    log = tmp_path / "bot.log"
    process = await launch(telegram, db_url, log)
    try:
        en = telegram.user(11, "en")
        telegram.send_text(en, "/interview junior 2")
        q1 = find_question(bank, (await telegram.wait_for(lambda s: question_messages(s, 11)))[0])
        telegram.send_text(en, q1.answer.en)
        await wait_text(telegram, 11, "Score: ")
        q2_message = (await telegram.wait_for(lambda s: question_messages(s, 11)[1:]))[0]
        q2 = find_question(bank, q2_message)

        process.send_signal(signal.SIGKILL)  # no chance to clean up
        await process.wait()

        ru = telegram.user(22, "ru", "Иван")
        telegram.send_text(ru, "/interview junior 2")  # arrives while the bot is down
        count_en = len(telegram.bot_messages(11))
        telegram.send_text(en, q2.answer.en, reply_to=q2_message["message_id"])

        process = await launch(telegram, db_url, log)
        feedback = await wait_text(telegram, 11, "Score: ", after=count_en)
        assert float(feedback["text"].split("Score: ")[1].split("/10")[0]) >= 7
        await wait_text(telegram, 11, "Interview finished", after=count_en)

        for index in range(2):
            asked = await telegram.wait_for(lambda s, i=index: question_messages(s, 22)[i:])
            question = find_question(bank, asked[0])
            count = len(telegram.bot_messages(22))
            telegram.send_text(ru, question.answer.ru)
            await wait_text(telegram, 22, "Оценка: ", after=count)
        await wait_text(telegram, 22, "Собеседование завершено")
    finally:
        await terminate(process)
    assert "Traceback" not in log.read_text()


async def test_run_reports_ready_once_its_grader_is_loaded(
    telegram: FakeTelegram, tmp_path: Path
) -> None:
    """`python -m bot run` starts its grading process before importing aiogram; the app must
    still wait for it, so /readyz (what the proxy routes by) turns 200 and stays so. It once
    never did: the started grader was never awaited, so /readyz answered 503 for good."""
    import aiohttp

    from tests.e2e.test_webhook import free_port

    port = free_port()
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    env = {"METRICS_HOST": "127.0.0.1", "METRICS_PORT": str(port)}
    process = await launch(telegram, db_url, tmp_path / "bot.log", env)
    try:
        async with aiohttp.ClientSession() as client:
            # Launched means its menus are set, which comes after the grader has loaded; the
            # port opens a moment later.
            await until_ready(port, limit=120)
            async with client.get(f"http://127.0.0.1:{port}/metrics") as reply:
                assert "bot_ready 1.0" in await reply.text()
    finally:
        await terminate(process)
