"""Leases and the inbox's take-over, on SQLite and on PostgreSQL (skipped with the reason where
none runs): one holder at a time, renewal, lapse; updates of a dead replica taken over once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.storage.engine import create_engine, create_session_factory
from bot.storage.inbox import UpdateInbox
from bot.storage.leases import live_holders, release_lease, take_lease

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TTL = timedelta(seconds=10)


@pytest.fixture
async def db(shared_db: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(shared_db)
    yield create_session_factory(engine)
    await engine.dispose()


async def test_one_holder_at_a_time(db: async_sessionmaker[AsyncSession]) -> None:
    won = await asyncio.gather(*(take_lease(db, "round:-1", f"r{i}", TTL, T0) for i in range(6)))
    assert sum(won) == 1  # racing replicas: exactly one holds it
    holder = f"r{won.index(True)}"
    other = "r9"
    assert await take_lease(db, "round:-1", holder, TTL, T0 + timedelta(seconds=5))  # renewed
    assert not await take_lease(db, "round:-1", other, TTL, T0 + timedelta(seconds=14))
    assert await take_lease(db, "round:-1", other, TTL, T0 + timedelta(seconds=16))  # lapsed
    assert await live_holders(db, ["round:-1", "round:-2"], T0 + timedelta(seconds=17)) == {
        "round:-1"
    }
    await release_lease(db, "round:-1", holder)  # not the holder any more: changes nothing
    assert not await take_lease(db, "round:-1", holder, TTL, T0 + timedelta(seconds=17))
    await release_lease(db, "round:-1", other)
    assert await take_lease(db, "round:-1", holder, TTL, T0 + timedelta(seconds=17))


def update(update_id: int) -> tuple[int, str]:
    return update_id, json.dumps({"update_id": update_id})


async def test_a_dead_replicas_updates_are_taken_over_once(
    db: async_sessionmaker[AsyncSession],
) -> None:
    inbox = UpdateInbox(db)
    await inbox.store([update(1)], claimed_by="dead")  # its replica never renews: lapsed
    await inbox.store([update(2)], claimed_by="alive")
    await inbox.store([update(3)])  # stored before claims existed
    await inbox.store([update(4)], claimed_by="me")
    await inbox.mark_handled(4)
    for name in ("alive", "me", "you"):
        assert await take_lease(db, f"replica:{name}", name, TTL, T0)
    assert await take_lease(db, "replica:dead", "dead", TTL, T0 - timedelta(minutes=1))

    taken = await asyncio.gather(inbox.claim_orphans("me", T0), inbox.claim_orphans("you", T0))
    ids = sorted(u for claimed in taken for u, _ in claimed)
    assert ids == [1, 3]  # each taken by one replica only; the live one's and the handled not
    assert await inbox.claim_orphans("me", T0) == []
    later = T0 + timedelta(seconds=11)  # "alive" stopped renewing; "me" and "you" still renew
    # (whichever of the two won update 1 and 3 above holds them while it lives)
    for name in ("me", "you"):
        assert await take_lease(db, f"replica:{name}", name, TTL, later)
    assert [u for u, _ in await inbox.claim_orphans("me", later)] == [2]
