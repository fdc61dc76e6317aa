"""Handles updates concurrently across people and in order for each person, with a bound.

One sender's updates run one after another (a burst of messages is read in the order it was
written, so an answer is never graded against a question the next message has not seen yet);
different senders run side by side, at most `limit` at a time. An update whose handler raises
is tried again a bounded number of times (a database blip, a Bot API hiccup), then recorded in the
inbox as failed and the person told "something went wrong, please try again": never replayed
forever, never dropped without a word. Each update is marked handled once that is decided.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

from aiogram import Bot, Dispatcher
from aiogram.dispatcher.middlewares.user_context import UserContextMiddleware
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramForbiddenError,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.types import Update
from sqlalchemy.exc import SQLAlchemyError

from bot.metrics import HANDLER_SECONDS, UPDATE_RETRIES, UPDATES
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


@dataclass(frozen=True)
class FailurePolicy:
    """What becomes of an update whose handler raises (UPDATE_ATTEMPTS, UPDATE_RETRY_DELAY)."""

    attempts: int = 3  # tries in all
    retry_delay: float = 1.0  # seconds before the second try, doubled before each next one
    # Tells the person once the last try failed (bot/telegram/failure_notice.py); None: nobody.
    notify: Callable[[Update], Awaitable[object]] | None = None


def _worth_retrying(exc: Exception) -> bool:
    """A Telegram refusal is final (the request middleware already waited out 429s and retried
    5xx and network errors); anything else (a database blip, a bug that depends on timing) may
    pass on another try."""
    if isinstance(exc, TelegramAPIError):
        return isinstance(exc, TelegramRetryAfter | TelegramServerError | TelegramNetworkError)
    return True


class UpdateQueue:
    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        limit: int = 64,
        feed: Callable[[Update], Awaitable[object]] | None = None,
        failures: FailurePolicy | None = None,
    ):
        self.dp = dp
        self.bot = bot
        self.inbox = inbox
        self.failures = failures or FailurePolicy()
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
        attempts, error = await self._try(update)
        UPDATES.labels(update.event_type, "ok" if error is None else "failed").inc()
        try:
            if error is None:
                await self.inbox.mark_handled(update.update_id)
            else:
                await self.inbox.mark_failed(update.update_id, attempts, type(error).__name__)
        except SQLAlchemyError:
            # Left unmarked, it runs again after a restart (to the same effect). The sender's
            # next updates must not wait for that.
            log.exception("could not mark update %s done", update.update_id)
        if (
            error is not None
            and self.failures.notify is not None
            and not isinstance(error, TelegramForbiddenError)  # they blocked the bot
        ):
            try:
                await self.failures.notify(update)
            except Exception:  # the notice is a courtesy: the failure is recorded either way
                log.exception("could not tell the sender of update %s it failed", update.update_id)

    async def _try(self, update: Update) -> tuple[int, Exception | None]:
        """Run the handler until it succeeds, up to `attempts` times; (tries, None) then, else
        (tries, the last exception). Telegram refusing a request (400, 403, ...) is not tried
        again: the same request would be refused the same way, after sending what came first
        twice."""
        kind, delay, attempt = update.event_type, self.failures.retry_delay, 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                await self._feed(update)
                return attempt, None
            except Exception as exc:
                if attempt >= self.failures.attempts or not _worth_retrying(exc):
                    log.exception(
                        "update %s failed %d time(s); recorded as failed", update.update_id, attempt
                    )
                    return attempt, exc
                log.warning(
                    "update %s failed (try %d of %d); trying again in %.1f s",
                    update.update_id, attempt, self.failures.attempts, delay, exc_info=True,
                )  # fmt: skip
            finally:
                HANDLER_SECONDS.labels(kind).observe(time.perf_counter() - started)
            UPDATE_RETRIES.labels(kind).inc()
            await asyncio.sleep(delay)
            delay *= 2

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
