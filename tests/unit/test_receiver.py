"""The receiver and its update queue against a real inbox: a person's order across a kill and a
restart, a failed inbox write that must not stall a person's queue, a failed clean-up that must
not stop the bot."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from aiogram import Bot, Dispatcher
from aiogram.types import Chat, Message, Update, User
from sqlalchemy.exc import OperationalError

from bot.clock import utcnow
from bot.metrics import REGISTRY
from bot.storage.inbox import REPLICA, UpdateInbox
from bot.storage.leases import take_lease
from bot.telegram.receiver import InboxReceiver, payload
from bot.telegram.update_queue import UpdateQueue

TAKEN = "bot_update_takeovers_total"
BOT = Bot("123456:TEST-token-for-the-receiver-tests")


def text_update(update_id: int, user_id: int, text: str) -> Update:
    person = User(id=user_id, is_bot=False, first_name="A")
    return Update(
        update_id=update_id,
        message=Message(
            message_id=update_id,
            date=datetime(2026, 12, 1, tzinfo=UTC),
            chat=Chat(id=user_id, type="private"),
            from_user=person,
            text=text,
        ),
    )


class ListReceiver(InboxReceiver):
    """Receives a fixed list of updates (as one getUpdates batch would), then waits."""

    def __init__(self, inbox: UpdateInbox, updates: list[Update], sole: bool) -> None:
        super().__init__(Dispatcher(), BOT, inbox)
        self.updates = updates
        self.sole_receiver = sole

    async def receive(self, allowed_updates: list[str]) -> None:
        await self.accept(self.updates)
        await asyncio.Event().wait()


def recording(receiver: InboxReceiver, seen: list[int]) -> None:
    async def feed(update: Update) -> None:
        seen.append(update.update_id)

    receiver.queue = UpdateQueue(receiver.dp, BOT, receiver.inbox, feed=feed)


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "not reached in time"
        await asyncio.sleep(0.05)


async def test_after_a_kill_a_persons_stored_message_runs_before_a_new_one(sessions) -> None:
    """Killed while it held a person's answer; restarted at once: the dead process's lease is
    still live. The person's next message ("/skip") must not run before the stored answer."""
    inbox = UpdateInbox(sessions)
    dead = "killed-process"
    # Its lease lapses in a second (REPLICA_TTL is five): the restart comes before that.
    assert await take_lease(sessions, f"{REPLICA}{dead}", dead, timedelta(seconds=1), utcnow())
    old = text_update(1, 42, "backward accumulates gradients")
    await inbox.store([(1, payload(old))], claimed_by=dead)

    receiver = ListReceiver(inbox, [text_update(2, 42, "/skip")], sole=True)
    seen: list[int] = []
    recording(receiver, seen)
    taken_before = REGISTRY.get_sample_value(TAKEN) or 0
    run = asyncio.create_task(receiver.run([]))

    async def both() -> bool:
        return len(seen) == 2

    await until(both)
    receiver.stop()
    await run
    assert seen == [1, 2]
    assert REGISTRY.get_sample_value(TAKEN) == taken_before + 1


async def test_a_receiver_beside_live_replicas_does_not_wait_for_them(sessions) -> None:
    """Webhook replicas run side by side: one starting does not wait for another's work."""
    inbox = UpdateInbox(sessions)
    other = "live-replica"
    assert await take_lease(sessions, f"{REPLICA}{other}", other, timedelta(hours=1), utcnow())
    await inbox.store([(1, payload(text_update(1, 7, "its own")))], claimed_by=other)

    receiver = ListReceiver(inbox, [text_update(2, 8, "mine")], sole=False)
    seen: list[int] = []
    recording(receiver, seen)
    run = asyncio.create_task(receiver.run([]))

    async def mine() -> bool:
        return seen == [2]

    await until(mine)
    receiver.stop()
    await run
    assert await inbox.held_elsewhere(receiver.replica) == 1  # still the live replica's


async def test_a_failed_inbox_write_does_not_stall_the_persons_queue(sessions) -> None:
    inbox = UpdateInbox(sessions)
    updates = [text_update(i, 9, f"message {i}") for i in (1, 2, 3)]
    await inbox.store([(u.update_id, payload(u)) for u in updates], claimed_by="me")
    seen: list[int] = []

    async def feed(update: Update) -> None:
        seen.append(update.update_id)

    marked = inbox.mark_handled
    failures = iter([True])

    async def flaky_mark(update_id: int) -> None:
        if next(failures, False):
            raise OperationalError("UPDATE received_updates", {}, Exception("database is locked"))
        await marked(update_id)

    inbox.mark_handled = flaky_mark  # type: ignore[method-assign]
    queue = UpdateQueue(Dispatcher(), BOT, inbox, feed=feed)
    for update in updates:
        queue.put(update)
    assert await queue.join(timeout=30)
    assert seen == [1, 2, 3]


async def test_a_failed_clean_up_does_not_stop_the_receiver(sessions) -> None:
    inbox = UpdateInbox(sessions)

    async def broken_prune() -> int:
        raise OperationalError("DELETE FROM received_updates", {}, Exception("disk I/O error"))

    receiver = ListReceiver(inbox, [], sole=True)
    inbox.prune = broken_prune  # type: ignore[method-assign]
    await receiver.prune()  # logged, not raised: the polling loop goes on
