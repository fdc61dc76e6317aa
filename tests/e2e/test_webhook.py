"""BOT_MODE=webhook: the fake Bot API posts updates to the bot as Telegram does (the secret in a
header, each update retried until a 2xx). A request without the secret is refused unread; a
kill at the worst point loses no answer; /healthz reports the database."""

from __future__ import annotations

import asyncio
import signal
import socket
import sqlite3
from pathlib import Path

import aiohttp
import pytest

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from tests.e2e.conftest import BotProcess, find_question, question_messages, wait_text
from tests.e2e.processes import launch, terminate
from tests.e2e.test_kill_durability import scalar, until
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e

SECRET = "test-secret_0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def local_hook(port: int) -> str:
    """Where the proxy in front of the bot would forward Telegram's posts (plain HTTP)."""
    return f"http://127.0.0.1:{port}/telegram/hook"


def webhook_settings(port: int, telegram: FakeTelegram) -> dict[str, str]:
    # The public URL must be https:// (the bot refuses anything else at start); the fake posts
    # to the bot's own port instead, as a TLS-terminating proxy would.
    telegram.webhook_targets = [local_hook(port)]
    return {
        "BOT_MODE": "webhook",
        "WEBHOOK_URL": "https://bot.example.org/telegram/hook",
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_HOST": "127.0.0.1",
        "WEBHOOK_PORT": str(port),
    }


async def post(url: str, body: object, secret: str | None) -> int:
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    async with (
        aiohttp.ClientSession() as client,
        client.post(url, json=body, headers=headers) as reply,
    ):
        return reply.status


async def scrape(url: str) -> dict[str, float]:
    """A Prometheus text page as {series: value} (comments left out)."""
    async with aiohttp.ClientSession() as client, client.get(url) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"].startswith("text/plain")
        page = await reply.text()
    series = {}
    for line in page.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            series[name] = float(value)
    return series


async def test_an_interview_over_the_webhook_and_the_secret_is_checked(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank
) -> None:
    port = free_port()
    settings = {k.lower(): v for k, v in webhook_settings(port, telegram).items()}
    bot = BotProcess(telegram, db_url, scoring, **settings)
    await bot.start(telegram)
    try:
        await telegram.wait_for(lambda s: s.webhook)
        assert telegram.webhook is not None
        assert telegram.webhook["secret_token"] == SECRET
        assert "message" in telegram.webhook["allowed_updates"]

        user = telegram.user(61)
        telegram.send_text(user, "/interview junior 1")
        first = (await telegram.wait_for(lambda s: question_messages(s, 61)))[0]
        telegram.send_text(user, find_question(bank, first).answer.en)
        await wait_text(telegram, 61, "Score: ")
        await wait_text(telegram, 61, "Interview finished")
        assert all(status == 200 for _, status in telegram.webhook_posts)

        # Forged requests: no secret, a wrong one. Refused unread: nothing stored or answered.
        assert telegram.webhook["url"] == "https://bot.example.org/telegram/hook"
        hook = local_hook(port)
        forged = {
            "update_id": 999_001,
            "message": {
                "message_id": 5,
                "date": 0,
                "chat": {"id": 62, "type": "private"},
                "from": {"id": 62, "is_bot": False, "first_name": "Eve"},
                "text": "/help",
            },
        }
        assert await post(hook, forged, None) == 401
        assert await post(hook, forged, "wrong-secret") == 401
        assert await post(hook, {"not": "an update"}, SECRET) == 400
        async with (
            aiohttp.ClientSession() as client,
            client.get(f"http://127.0.0.1:{port}/healthz") as reply,
        ):
            assert reply.status == 200
            assert await reply.json() == {"database": "ok"}
        # The answer's update is counted when its handler returns, which may be just after the
        # last message it sent reached the fake: wait for the count, not a fixed time.
        handled = 'bot_updates_total{outcome="ok",type="message"}'
        for _ in range(200):
            metrics = await scrape(f"http://127.0.0.1:{port}/metrics")
            if metrics.get(handled, 0) >= 2:
                break
            await asyncio.sleep(0.05)
        assert metrics[handled] >= 2
        assert metrics['bot_telegram_requests_total{method="SetWebhook",outcome="ok"}'] >= 1
        assert metrics['bot_telegram_requests_total{method="SendMessage",outcome="ok"}'] >= 3
        assert metrics["bot_grading_batch_size_count"] >= 1
        assert metrics['bot_daily_deliveries{status="sent"}'] == 0
        # The feedback has gone out and was marked so: nothing owed, however old.
        assert metrics["bot_outbox_oldest_seconds"] == 0
        # The same update with the secret is handled: the refusals above were the secret's.
        telegram.user(62, first_name="Eve")  # the fake knows the chat now
        assert await post(hook, forged, SECRET) == 200
        await wait_text(telegram, 62, "/interview")
        assert len(telegram.bot_messages(62)) == 1
        # Telegram delivering the same update again (its 2xx got lost): not handled twice.
        assert await post(hook, forged, SECRET) == 200
        await wait_text(telegram, 61, "Interview finished")
        await asyncio.sleep(0.3)  # a second reply, if there were one, would be out by now
        assert len(telegram.bot_messages(62)) == 1
    finally:
        await bot.stop()


async def test_a_kill_before_the_update_is_stored_loses_no_answer(
    telegram: FakeTelegram, bank: QuestionBank, tmp_path: Path
) -> None:
    """The database refuses every write (a held lock) when the answer is posted: the bot cannot
    store it, so it does not say 2xx, and Telegram keeps retrying. The bot is SIGKILLed then;
    after the restart the retried post is stored, graded once, answered once."""
    db = tmp_path / "bot.db"
    db_url = f"sqlite+aiosqlite:///{db}"
    log = tmp_path / "bot.log"
    env = webhook_settings(free_port(), telegram)
    process = await launch(telegram, db_url, log, env)
    lock: sqlite3.Connection | None = None
    try:
        await telegram.wait_for(lambda s: s.webhook)
        user = telegram.user(71)
        telegram.send_text(user, "/interview junior 1")
        message = (await telegram.wait_for(lambda s: question_messages(s, 71)))[0]
        question = find_question(bank, message)
        await until(
            lambda: scalar(db, "SELECT count(*) FROM asked_questions WHERE message_id > 0"),
            "the question recorded as sent",
        )
        lock = sqlite3.connect(db, timeout=30, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        answer = telegram.send_text(user, question.answer.en)
        update_id = next(
            u["update_id"]
            for u in telegram.updates
            if u.get("message", {}).get("message_id") == answer["message_id"]
        )
        # The bot could not store it (busy database): it answered 503, Telegram will retry.
        await until(
            lambda: (update_id, 503) in telegram.webhook_posts, "the post refused", timeout=60
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
        assert update_id not in telegram.handed_out
        lock.rollback()
        lock.close()
        lock = None

        count = len(telegram.bot_messages(71))
        process = await launch(telegram, db_url, log, env)
        feedback = await wait_text(telegram, 71, "Score: ", after=count)
        assert float(feedback["text"].split("Score: ")[1].split("/10")[0]) >= 7
        await wait_text(telegram, 71, "Interview finished", after=count)
        texts = [m["text"] for m in telegram.bot_messages(71)[count:]]
        assert sum("Score: " in t for t in texts) == 1
        assert scalar(db, "SELECT count(*) FROM answers") == 1
    finally:
        if lock is not None:
            lock.close()
        await terminate(process)


async def test_polling_serves_health_and_metrics_on_metrics_port(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService
) -> None:
    port = free_port()
    bot = BotProcess(telegram, db_url, scoring, metrics_host="127.0.0.1", metrics_port=port)
    await bot.start(telegram)
    try:
        # A webhook left set would make getUpdates fail: polling deletes it first.
        await telegram.wait_for(lambda s: s.sent(method="deleteWebhook"))
        user = telegram.user(81)
        telegram.send_text(user, "/help")
        await wait_text(telegram, 81, "/interview")
        telegram.chats[81].blocked = True  # the user blocked the bot: Telegram answers 403
        telegram.send_text(user, "/help")
        forbidden = 'bot_telegram_requests_total{method="SendMessage",outcome="403"}'
        metrics = await scrape(f"http://127.0.0.1:{port}/metrics")
        for _ in range(400):  # until the refused reply has been counted
            if forbidden in metrics:
                break
            await asyncio.sleep(0.05)
            metrics = await scrape(f"http://127.0.0.1:{port}/metrics")
        assert metrics['bot_telegram_requests_total{method="SendMessage",outcome="ok"}'] >= 1
        assert metrics[forbidden] >= 1
        assert metrics['bot_handler_seconds_count{type="message"}'] >= 2
        async with (
            aiohttp.ClientSession() as client,
            client.get(f"http://127.0.0.1:{port}/healthz") as reply,
        ):
            assert reply.status == 200
    finally:
        await bot.stop()
