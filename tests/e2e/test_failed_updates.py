"""An update whose handler raises, through the real aiogram path (polling the fake Bot API): it is
tried again a bounded number of times; once a try succeeds the person sees only the normal reply;
if every try fails it is recorded as failed, counted in /stats and /metrics, and the person is
told, in their language, that something went wrong and to try again. Nothing is dropped without
a word."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.i18n import t
from bot.scoring.service import ScoringService
from tests.e2e.conftest import BotProcess, wait_text
from tests.e2e.test_kill_durability import scalar, until
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e

ADMIN = 830
ATTEMPTS = 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def db_path(db_url: str) -> Path:
    return Path(db_url.split("///", 1)[1])


def export_failing(monkeypatch: pytest.MonkeyPatch, failures: int | None) -> list[int]:
    """/export's query raises its first `failures` times (None: every time); returns the list
    of calls, one entry per try."""
    calls: list[int] = []
    from bot.services import history_service  # where /export's HistoryService reads it

    real = history_service.history

    async def flaky_history(*args: Any, **kwargs: Any) -> Any:
        calls.append(len(calls) + 1)
        if failures is None or len(calls) <= failures:
            raise RuntimeError("the export query broke")
        return await real(*args, **kwargs)

    monkeypatch.setattr(history_service, "history", flaky_history)
    return calls


async def scrape(port: int) -> dict[str, float]:
    """The metrics page as {series: value}; waits for the server to listen (it starts just after
    the bot reports ready)."""
    url = f"http://127.0.0.1:{port}/metrics"
    for _ in range(200):
        try:
            async with aiohttp.ClientSession() as client, client.get(url) as reply:
                assert reply.status == 200
                page = await reply.text()
                break
        except aiohttp.ClientConnectorError:
            await asyncio.sleep(0.05)
    else:
        raise TimeoutError(f"nothing listens on {url}")
    series = {}
    for line in page.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            series[name] = float(value)
    return series


async def test_a_handler_that_always_raises_is_recorded_and_the_person_told(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = export_failing(monkeypatch, failures=None)
    metrics_port = free_port()
    process = BotProcess(
        telegram, db_url, scoring,
        update_attempts=ATTEMPTS, update_retry_delay=0.05, admin_ids=str(ADMIN),
        metrics_host="127.0.0.1", metrics_port=metrics_port,
    )  # fmt: skip
    await process.start(telegram)
    db = db_path(db_url)
    try:
        before = await scrape(metrics_port)
        # A person whose Telegram is in Russian and who never chose otherwise: Russian.
        russian = telegram.user(821, language_code="ru")
        telegram.send_text(russian, "/export")
        await wait_text(telegram, 821, t("ru", "update_failed"))
        assert len(calls) == ATTEMPTS  # tried three times, not once, not forever

        # A person who chose English in /settings, on a Russian Telegram: their choice wins.
        chose_english = telegram.user(822, language_code="ru")
        telegram.send_text(chose_english, "/start")
        await wait_text(telegram, 822, "Привет")
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE users SET language = 'en' WHERE id = 822")
        telegram.send_text(chose_english, "/export")
        await wait_text(telegram, 822, t("en", "update_failed"))
        assert len(calls) == 2 * ATTEMPTS

        # Recorded: done (not replayed at the next start), failed, with its tries and the
        # exception's type (not its message, which could quote the person).
        await until(
            lambda: (
                scalar(db, "SELECT count(*) FROM received_updates WHERE failed_at IS NOT NULL") == 2
            ),
            "both failures recorded",
        )
        assert scalar(
            db,
            "SELECT count(*) FROM received_updates WHERE failed_at IS NOT NULL"
            f" AND handled_at IS NOT NULL AND attempts = {ATTEMPTS} AND error = 'RuntimeError'",
        ) == 2  # fmt: skip
        # Each failed update got exactly one notice, and nothing else.
        assert [m["text"] for m in telegram.bot_messages(821)] == [t("ru", "update_failed")]

        # Visible to operators: /stats and /metrics.
        admin = telegram.user(ADMIN)
        telegram.send_text(admin, "/stats")
        await wait_text(telegram, ADMIN, "Messages that failed in 24 h (handler error): 2")
        after = await scrape(metrics_port)
        assert after["bot_failed_updates_24h"] == 2
        failed = 'bot_updates_total{outcome="failed",type="message"}'
        assert after[failed] - before.get(failed, 0) == 2
        retries = 'bot_update_retries_total{type="message"}'
        assert after[retries] - before.get(retries, 0) == 2 * (ATTEMPTS - 1)
    finally:
        await process.stop()


async def test_a_handler_that_raises_once_is_tried_again_and_answers_normally(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = export_failing(monkeypatch, failures=1)
    process = BotProcess(
        telegram, db_url, scoring, update_attempts=ATTEMPTS, update_retry_delay=0.05
    )
    await process.start(telegram)
    db = db_path(db_url)
    try:
        user = telegram.user(823)
        telegram.send_text(user, "/export")
        await wait_text(telegram, 823, t("en", "export_empty"))
        await until(
            lambda: (
                scalar(db, "SELECT count(*) FROM received_updates WHERE handled_at IS NOT NULL")
                >= 1
            ),
            "the update marked handled",
        )
        assert calls == [1, 2]
        assert [m["text"] for m in telegram.bot_messages(823)] == [t("en", "export_empty")]
        assert scalar(db, "SELECT count(*) FROM received_updates WHERE failed_at IS NOT NULL") == 0
    finally:
        await process.stop()
