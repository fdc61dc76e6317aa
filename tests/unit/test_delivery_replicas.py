"""Two replicas flush one person's outbox at the same moment: each item goes out once when the
flushes take turns through the `outbox:<user>` lease, and twice without it."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest

from bot.clock import utcnow
from bot.content.loader import QuestionBank
from bot.services.interviews import InterviewService
from bot.storage.leases import Leases
from bot.telegram.delivery import Delivery


class SlowBot:
    """Sends take a moment, as over the network: long enough for a second flush to read the
    outbox before the first has marked its item sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []

    async def send_message(self, chat_id: int, text: str, **_: Any) -> SimpleNamespace:
        await asyncio.sleep(0.05)
        self.sent.append(chat_id)
        return SimpleNamespace(message_id=100 + len(self.sent))


@pytest.mark.parametrize("replicas", [True, False])
async def test_two_replicas_send_each_item_once(
    sessions, bank: QuestionBank, scoring, replicas: bool
) -> None:
    interviews = InterviewService(sessions, bank, scoring, random.Random(1))
    await interviews.ensure_user(5, "en")
    await interviews.start(5, 5, "junior", 2)  # owes the first question
    bot = SlowBot()
    leases = Leases(sessions) if replicas else None  # None: a single process, no lease
    one, two = (Delivery(bot, interviews, leases) for _ in range(2))  # type: ignore[arg-type]
    await asyncio.gather(one.flush(5, "en"), two.flush(5, "en"))
    if replicas:
        assert bot.sent == [5]
    else:
        assert bot.sent == [5, 5]  # what the lease prevents


class StuckBot(SlowBot):
    """The first send hangs until released, as one waiting out a long 429."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def send_message(self, chat_id: int, text: str, **kw: Any) -> SimpleNamespace:
        self.started.set()
        await self.release.wait()
        return await super().send_message(chat_id, text, **kw)


async def test_a_long_flush_keeps_its_lease_and_a_dead_ones_lapses(
    sessions, bank: QuestionBank, scoring
) -> None:
    from datetime import timedelta

    from bot.storage.leases import live_holders

    interviews = InterviewService(sessions, bank, scoring, random.Random(1))
    await interviews.ensure_user(5, "en")
    await interviews.start(5, 5, "junior", 2)
    short = {"lease": timedelta(seconds=0.4), "renewal": timedelta(seconds=0.1)}
    stuck = StuckBot()
    one = Delivery(stuck, interviews, Leases(sessions), **short)  # type: ignore[arg-type]
    first = asyncio.create_task(one.flush(5, "en"))
    await stuck.started.wait()
    # The send hangs for many lease lengths: the heartbeat keeps the lease all along.
    for _ in range(8):
        await asyncio.sleep(0.2)
        assert await live_holders(sessions, ["outbox:5"], utcnow()) == {"outbox:5"}
    stuck.release.set()
    await first
    assert stuck.sent == [5]
    assert not await live_holders(sessions, ["outbox:5"], utcnow())  # released when done
    # A replica killed mid-flush stops renewing (here: it never renews) and never releases:
    # the survivor takes over once the lease lapses, and sends what is still owed.
    await interviews.ensure_user(6, "en")
    await interviews.start(6, 6, "junior", 2)
    dead = StuckBot()
    never = {"lease": timedelta(seconds=0.4), "renewal": timedelta(hours=1)}
    killed = Delivery(dead, interviews, Leases(sessions), **never)  # type: ignore[arg-type]
    doomed = asyncio.create_task(killed.flush(6, "en"))
    await dead.started.wait()
    survivor_bot = SlowBot()
    survivor = Delivery(survivor_bot, interviews, Leases(sessions), **short)  # type: ignore[arg-type]
    await asyncio.wait_for(survivor.flush(6, "en"), timeout=30)
    assert survivor_bot.sent == [6] and dead.sent == []
    doomed.cancel()
