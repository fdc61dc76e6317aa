"""Storing updates: a redelivered one is not new, and two replicas storing the same update at
the same moment both succeed quietly, with exactly one of them getting it as new."""

from __future__ import annotations

import asyncio

from bot.storage.engine import create_engine, create_session_factory
from bot.storage.inbox import UpdateInbox


async def test_the_same_updates_stored_at_once_are_new_to_exactly_one(shared_db: str) -> None:
    engines = [create_engine(shared_db) for _ in range(2)]
    try:
        inboxes = [UpdateInbox(create_session_factory(e)) for e in engines]
        assert await inboxes[0].store([(1, "{}")], "a") == {1}
        assert await inboxes[1].store([(1, "{}")], "b") == set()  # redelivered: not new
        for round_ in range(5):  # both replicas at once, as Telegram's retry meets the original
            ids = [(100 + 10 * round_ + k, "{}") for k in range(3)]
            first, second = await asyncio.gather(
                inboxes[0].store([*ids, (1, "{}")], "a"), inboxes[1].store(ids, "b")
            )
            assert first | second == {i for i, _ in ids}
            assert not first & second
    finally:
        for engine in engines:
            await engine.dispose()
