"""Three `python -m bot run` replicas in webhook mode on PostgreSQL and Redis, behind one URL
(the fake Bot API spreads its posts over them and, like a load balancer, moves a failed post
to the next one). A hundred people take an interview and a group plays a round; one replica is
SIGKILLed mid-run. Every answer is graded once and answered once, the round finishes on the
others, and the fake's global limit (30 messages a second) never answers 429. Skipped with the
reason where PostgreSQL or Redis does not run."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.content.loader import QuestionBank
from bot.storage.engine import create_engine
from bot.storage.models import Answer, RoundAnswer
from tests.e2e.conftest import find_question, question_messages, wait_text
from tests.e2e.processes import launch, terminate
from tests.e2e.test_group_rounds import GROUP, round_questions, scores
from tests.e2e.test_webhook import SECRET, free_port, post
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e

USERS = range(5000, 5100)


async def count(db_url: str, model: type) -> int:
    engine = create_engine(db_url)
    async with engine.connect() as conn:
        value = await conn.scalar(select(func.count()).select_from(model))
    await engine.dispose()
    return int(value or 0)


@pytest.mark.parametrize("shared_db", ["postgresql"], indirect=True)
async def test_three_replicas_lose_nothing_when_one_is_killed(
    telegram: FakeTelegram,
    bank: QuestionBank,
    tmp_path: Path,
    shared_db: str,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROUND_MIN_SECONDS", "1")
    ports = [free_port() for _ in range(3)]
    telegram.webhook_targets = [f"http://127.0.0.1:{p}/telegram/hook" for p in ports]
    telegram.global_rate = 30
    processes = []
    try:
        for index, port in enumerate(ports):
            env = {
                "BOT_MODE": "webhook",
                "WEBHOOK_URL": "https://bot.example.org/telegram/hook",
                "WEBHOOK_SECRET": SECRET,
                "WEBHOOK_HOST": "127.0.0.1",
                "WEBHOOK_PORT": str(port),
                "REDIS_URL": redis_url,
                "SEND_RATE": "25",
            }
            processes.append(await launch(telegram, shared_db, tmp_path / f"r{index}.log", env))

        admin = telegram.user(10, first_name="Alice")
        bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
        telegram.group(GROUP, members={10: "administrator"})
        telegram.add_bot(admin, GROUP)
        telegram.send_in_group(admin, GROUP, "/round junior 1 120")
        asked = (await telegram.wait_for(lambda s: round_questions(s, GROUP)))[0]
        round_question = find_question(bank, asked)

        for chat in USERS:
            telegram.send_text(telegram.user(chat), "/interview junior 1")
        await telegram.wait_for(lambda s: all(question_messages(s, c) for c in USERS))
        half = len(USERS) // 2
        for position, chat in enumerate(USERS):
            question = find_question(bank, question_messages(telegram, chat)[0])
            text = question.answer.en if position % 2 else "I don't know"
            telegram.send_text(telegram.user(chat), text)
            if position == half:
                telegram.send_in_group(bob, GROUP, round_question.answer.en,
                                       reply_to=asked["message_id"])  # fmt: skip
                processes[0].send_signal(signal.SIGKILL)  # mid-run, no chance to clean up
                await processes[0].wait()
        late = telegram.send_in_group(cy, GROUP, "I don't know", reply_to=asked["message_id"])
        await telegram.wait_for(lambda s: s.reactions.get((GROUP, late["message_id"])))
        next_data = asked["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        telegram.press(admin, asked, next_data)  # close the question now, not at its deadline

        for chat in USERS:
            await wait_text(telegram, chat, "Interview finished")
        results = await wait_text(telegram, GROUP, "Results · question 1/1")
        assert [name for name, _ in scores(results)] == ["Bob", "Cy"]
        await wait_text(telegram, GROUP, "Round finished")

        for chat in USERS:  # each answer graded and answered exactly once
            texts = [m["text"] for m in telegram.bot_messages(chat)]
            assert sum(t.startswith("Score: ") for t in texts) == 1, chat
            assert sum("Interview finished" in t for t in texts) == 1, chat
        assert await count(shared_db, Answer) == len(USERS)
        assert await count(shared_db, RoundAnswer) == 2
        assert len([m for m in telegram.bot_messages(GROUP) if "Results" in m["text"]]) == 1
        assert not [m for m, _ in telegram.requests if m == "sendMessage:429"]
        # A post without the secret is refused by a live replica, unread.
        hook = telegram.webhook_targets[1]
        assert await post(hook, {"update_id": 1, "message": {}}, None) == 401
    finally:
        for process in processes:
            await terminate(process)
    for index in (1, 2):
        assert "Traceback" not in (tmp_path / f"r{index}.log").read_text()
