"""Two webhook replicas behind one URL (the fake Bot API posts updates to them in turn, as a load
balancer would) share Telegram's global limit through Redis: the fake answers 429 from the 6th
message within a second, each replica may send 2.5 a second: one shared budget stays a message
below the limit, two budgets of their own pass it.
Skipped with the reason where no Redis runs on 127.0.0.1:6379."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.scoring.service import ScoringService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.inbox import UpdateInbox
from bot.storage.leases import take_lease
from bot.storage.models import ReceivedUpdate
from tests.e2e.conftest import BotProcess, wait_text
from tests.e2e.test_webhook import SECRET, free_port
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e

USERS = range(3000, 3020)


def replica(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, port: int, redis_url: str | None
) -> BotProcess:
    return BotProcess(
        telegram, db_url, scoring,
        bot_mode="webhook", webhook_url="https://bot.example.org/telegram/hook",
        webhook_secret=SECRET, webhook_host="127.0.0.1", webhook_port=port,
        send_rate=2.5, redis_url=redis_url,
    )  # fmt: skip


@pytest.mark.parametrize("shared", [True, False], ids=["redis", "per-process"])
async def test_replicas_share_the_global_send_budget(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, redis_url: str, shared: bool
) -> None:
    ports = [free_port(), free_port()]
    telegram.webhook_targets = [f"http://127.0.0.1:{p}/telegram/hook" for p in ports]
    telegram.global_rate = 5
    replicas = [replica(telegram, db_url, scoring, p, redis_url if shared else None) for p in ports]
    for bot in replicas:
        await bot.start(telegram)
    try:
        await telegram.wait_for(lambda s: s.webhook)
        for chat in USERS:
            telegram.send_text(telegram.user(chat), "/help")
        await telegram.wait_for(lambda s: all(s.bot_messages(c) for c in USERS))
        refused = [m for m, _ in telegram.requests if m == "sendMessage:429"]
        if shared:
            assert refused == []  # one budget: 2.5/s across both replicas
            assert all(len(telegram.bot_messages(c)) == 1 for c in USERS)
        else:
            assert refused  # the check above can fail: two budgets of 2.5/s each hit 429
    finally:
        for bot in replicas:
            await bot.stop()


async def test_a_live_replica_takes_over_what_a_dead_one_stored(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService
) -> None:
    """An update a replica acknowledged (stored, claimed) and then died on is handled by the
    next live replica once the dead one's lease has lapsed; one still alive keeps its own."""
    engine = create_engine(db_url)
    sessions = create_session_factory(engine)
    inbox = UpdateInbox(sessions)
    user = telegram.user(3100)
    orphan = {"update_id": 900_001, "message": telegram._message(user, **telegram._text("/help"))}
    other = telegram.user(3101)
    kept = {"update_id": 900_002, "message": telegram._message(other, **telegram._text("/help"))}
    await inbox.store([(900_001, json.dumps(orphan))], claimed_by="dead-replica")
    await inbox.store([(900_002, json.dumps(kept))], claimed_by="live-replica")
    now = datetime.now(UTC)
    await take_lease(sessions, "replica:dead-replica", "dead-replica", timedelta(0), now)
    await take_lease(sessions, "replica:live-replica", "live-replica", timedelta(hours=1), now)
    bot = replica(telegram, db_url, scoring, free_port(), None)
    await bot.start(telegram)
    try:
        await wait_text(telegram, 3100, "/interview")  # the dead replica's update, handled
        # Both were looked at in the same take-over: the live replica's is left to it.
        async with sessions() as session:
            row = await session.get(ReceivedUpdate, 900_002)
            assert row is not None and row.claimed_by == "live-replica" and not row.handled_at
        assert telegram.bot_messages(3101) == []
    finally:
        await bot.stop()
        await engine.dispose()
