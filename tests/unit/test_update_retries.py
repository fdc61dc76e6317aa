"""The update queue's failure policy against a real inbox: a handler that raises is tried again a
bounded number of times; one that succeeds on a later try is just handled; one that never does is
recorded as failed and its sender told; a Telegram refusal is not tried again (the same request
would be refused the same way), and a person who blocked the bot is not written to."""

from __future__ import annotations

from aiogram import Dispatcher
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.methods import SendMessage
from aiogram.types import Update
from sqlalchemy import select

from bot.storage.inbox import UpdateInbox
from bot.storage.models import ReceivedUpdate
from bot.telegram.receiver import payload
from bot.telegram.update_queue import FailurePolicy, UpdateQueue
from tests.unit.test_receiver import BOT, text_update

SEND = SendMessage(chat_id=1, text="x")


async def run(sessions, failures: list[Exception], attempts: int = 3):
    """Feed one update whose handler raises `failures` in turn, then succeeds; return the
    number of tries, the updates the notice was given, and the stored row."""
    inbox = UpdateInbox(sessions)
    update = text_update(1, 9, "hello")
    await inbox.store([(update.update_id, payload(update))], claimed_by="me")
    tries: list[int] = []
    told: list[Update] = []

    async def feed(update: Update) -> None:
        tries.append(update.update_id)
        if len(tries) <= len(failures):
            raise failures[len(tries) - 1]

    async def notify(update: Update) -> None:
        told.append(update)

    policy = FailurePolicy(attempts=attempts, retry_delay=0.0, notify=notify)
    queue = UpdateQueue(Dispatcher(), BOT, inbox, feed=feed, failures=policy)
    queue.put(update)
    assert await queue.join(timeout=30)
    async with sessions() as session:
        row = await session.scalar(select(ReceivedUpdate))
    return len(tries), told, row


async def test_a_handler_that_fails_then_succeeds_is_just_handled(sessions) -> None:
    tries, told, row = await run(sessions, [RuntimeError("blip"), RuntimeError("blip")])
    assert tries == 3 and told == []
    assert row.handled_at is not None and row.failed_at is None


async def test_a_handler_that_always_fails_is_recorded_and_its_sender_told(sessions) -> None:
    tries, told, row = await run(sessions, [ValueError("bug")] * 5, attempts=3)
    assert tries == 3 and [u.update_id for u in told] == [1]
    assert row.handled_at is not None and row.failed_at is not None
    assert (row.attempts, row.error) == (3, "ValueError")


async def test_a_telegram_refusal_is_not_tried_again(sessions) -> None:
    refused = TelegramBadRequest(SEND, "Bad Request: message is too long")
    tries, told, row = await run(sessions, [refused] * 3)
    assert tries == 1 and len(told) == 1
    assert (row.attempts, row.error) == (1, "TelegramBadRequest")


async def test_a_person_who_blocked_the_bot_is_not_written_to(sessions) -> None:
    blocked = TelegramForbiddenError(SEND, "Forbidden: bot was blocked by the user")
    tries, told, row = await run(sessions, [blocked] * 3)
    assert tries == 1 and told == []
    assert row.failed_at is not None
