"""Handles updates concurrently across people and in order for each person, with a bound.

One sender's updates run one after another (a burst of messages is read in the order it was
written, so an answer is never graded against a question the next message has not seen yet);
different senders run side by side, at most `limit` at a time. Each update is marked handled in
the inbox once its handler has finished, whether it succeeded or raised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable

from aiogram import Bot, Dispatcher
from aiogram.dispatcher.middlewares.user_context import UserContextMiddleware
from aiogram.types import Update
from sqlalchemy.exc import SQLAlchemyError

from bot.metrics import HANDLER_SECONDS, UPDATES
from bot.storage.inbox import UpdateInbox

log = logging.getLogger(__name__)


def ordering_key(update: Update) -> Hashable:
    """Who an update belongs to: its sender, else its chat, else it stands alone."""
    context = UserContextMiddleware.resolve_event_context(update)
    if context.user is not None:
        return ("user", context.user.id)
    if context.chat is not None:
        return ("chat", context.chat.id)
    return ("update", update.update_id)


class UpdateQueue:
    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        limit: int = 64,
        feed: Callable[[Update], Awaitable[object]] | None = None,
    ):
        self.dp = dp
        self.bot = bot
        self.inbox = inbox
        self._slots = asyncio.Semaphore(limit)
        self._queues: dict[Hashable, deque[Update]] = {}
        self._workers: set[asyncio.Task[None]] = set()
        self._feed = feed or (lambda update: dp.feed_update(bot, update))

    def put(self, update: Update) -> None:
        key = ordering_key(update)
        queue = self._queues.get(key)
        if queue is not None:  # a worker is draining this sender's updates: join the line
            queue.append(update)
            return
        self._queues[key] = deque([update])
        worker = asyncio.create_task(self._drain(key), name=f"updates-{key}")
        self._workers.add(worker)
        worker.add_done_callback(self._workers.discard)

    async def _drain(self, key: Hashable) -> None:
        queue = self._queues[key]
        try:
            while queue:
                update = queue[0]
                async with self._slots:
                    await self._handle(update)
                queue.popleft()
        finally:
            del self._queues[key]

    async def _handle(self, update: Update) -> None:
        kind, outcome = update.event_type, "ok"
        started = time.perf_counter()
        try:
            await self._feed(update)
        except Exception:  # logged like aiogram's polling does; the next update goes on
            outcome = "error"
            log.exception("update %s failed", update.update_id)
        HANDLER_SECONDS.labels(kind).observe(time.perf_counter() - started)
        UPDATES.labels(kind, outcome).inc()
        # Even a failed update is done: one that always fails must not be replayed forever.
        try:
            await self.inbox.mark_handled(update.update_id)
        except SQLAlchemyError:
            # It was handled; left unmarked, it runs again after a restart (to the same effect).
            # The sender's next updates must not wait for that.
            log.exception("could not mark update %s handled", update.update_id)

    async def join(self, timeout: float | None = None) -> bool:
        """Wait for the updates in hand; False if some were still running at the timeout
        (they stay unhandled in the inbox and run again after a restart)."""
        if not self._workers:
            return True
        _, pending = await asyncio.wait(set(self._workers), timeout=timeout)
        return not pending

    async def cancel(self) -> None:
        for worker in list(self._workers):
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
