"""`python -m bot run` as a real process: a two-question group round that survives a SIGKILL.

(Deadlines resumed from the database after a restart: tests/e2e/test_group_rounds.py.)
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from bot.content.loader import QuestionBank
from tests.e2e.conftest import find_question, wait_text
from tests.e2e.processes import launch, terminate
from tests.e2e.test_group_rounds import GROUP, question_recorded, round_questions, scores
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e


async def test_round_runs_through_python_m_bot_run_across_a_kill(
    telegram: FakeTelegram, bank: QuestionBank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROUND_MIN_SECONDS", "1")  # the child process inherits the environment
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    log = tmp_path / "bot.log"
    process = await launch(telegram, db_url, log)
    try:
        admin = telegram.user(10, first_name="Alice")
        bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
        telegram.group(GROUP, members={10: "administrator"})
        telegram.add_bot(admin, GROUP)
        telegram.send_in_group(admin, GROUP, "/round junior 2 60")
        first = (await telegram.wait_for(lambda s: round_questions(s, GROUP)))[0]
        await question_recorded(db_url, GROUP, first["message_id"])
        question = find_question(bank, first)
        answer = telegram.send_in_group(
            bob, GROUP, question.answer.en, reply_to=first["message_id"]
        )
        await telegram.wait_for(lambda s: s.reactions.get((GROUP, answer["message_id"])))

        process.send_signal(signal.SIGKILL)  # mid-question, no chance to clean up
        await process.wait()
        late = telegram.send_in_group(cy, GROUP, "I don't know", reply_to=first["message_id"])
        process = await launch(telegram, db_url, log)
        # The reply sent while the bot was down is taken by the new process, then Next.
        await telegram.wait_for(lambda s: s.reactions.get((GROUP, late["message_id"])))
        next_data = first["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        telegram.press(admin, first, next_data)
        results = await wait_text(telegram, GROUP, "Results · question 1/2")
        assert [name for name, _ in scores(results)] == ["Bob", "Cy"]
        second = (await telegram.wait_for(lambda s: round_questions(s, GROUP)[1:]))[0]
        await question_recorded(db_url, GROUP, second["message_id"])
        q2 = find_question(bank, second)
        telegram.send_in_group(cy, GROUP, q2.answer.en, reply_to=second["message_id"])
        telegram.send_in_group(bob, GROUP, "I don't know", reply_to=second["message_id"])
        await wait_text(telegram, GROUP, "Results · question 2/2")
        board = await wait_text(telegram, GROUP, "Round finished — leaderboard (2 questions)")
        assert "Bob" in board["text"] and "Cy" in board["text"]
        assert len(round_questions(telegram, GROUP)) == 2
    finally:
        await terminate(process)
    assert "Traceback" not in log.read_text()
