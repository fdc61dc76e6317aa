"""Long polling that stores each batch of updates before Telegram is told they arrived.

aiogram's own polling confirms an update (the offset of the next getUpdates) while its handler
may still be waiting to run, so a kill in between loses the update. Here a batch is committed
to the inbox first, then handed to the update queue, and only then is the next getUpdates sent.
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiogram import Bot, Dispatcher
from aiogram.exceptions import TelegramNetworkError, TelegramServerError
from aiogram.methods import GetUpdates
from aiogram.types import Update
from aiogram.utils.backoff import Backoff, BackoffConfig
from sqlalchemy.exc import SQLAlchemyError

from bot.storage.inbox import UpdateInbox
from bot.telegram.update_queue import UpdateQueue

log = logging.getLogger(__name__)

BACKOFF = BackoffConfig(min_delay=0.5, max_delay=10.0, factor=1.5, jitter=0.1)
PRUNE_EVERY = 3600.0  # seconds between deletions of old handled updates


def payload(update: Update) -> str:
    return update.model_dump_json(exclude_none=True)


class InboxPoller:
    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        polling_timeout: int,
        concurrency: int = 64,
        drain_timeout: float = 20.0,
    ):
        self.dp = dp
        self.bot = bot
        self.inbox = inbox
        self.polling_timeout = polling_timeout
        self.drain_timeout = drain_timeout
        self.queue = UpdateQueue(dp, bot, inbox, concurrency)
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def replay(self) -> int:
        """Hand over what a previous process stored but did not finish handling."""
        left = await self.inbox.unhandled()
        for _, data in left:
            self.queue.put(Update.model_validate_json(data, context={"bot": self.bot}))
        if left:
            log.info("handling %d update(s) stored before the restart", len(left))
        return len(left)

    async def run(self, allowed_updates: list[str]) -> None:
        """Poll until stop(), then let the updates in hand finish for up to `drain_timeout`
        (any that do not stay in the inbox for the next start). Cancelled, it stops at once,
        as a kill would."""
        await self.inbox.prune()
        await self.replay()
        poll = asyncio.create_task(self._poll(allowed_updates))
        stop = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({poll, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (poll, stop):
                task.cancel()
            await asyncio.gather(poll, stop, return_exceptions=True)
            error = None if poll.cancelled() else poll.exception()
            if error is not None or not self._stop.is_set():  # cancelled or broken: at once
                await self.queue.cancel()
        if error is not None:
            raise error
        if not await self.queue.join(self.drain_timeout):
            log.warning("stopping with updates still running; they run again on restart")
        await self.queue.cancel()

    async def _poll(self, allowed_updates: list[str]) -> None:
        backoff = Backoff(config=BACKOFF)
        offset: int | None = None
        pruned = time.monotonic()
        request_timeout = int((self.bot.session.timeout or 60) + self.polling_timeout)
        while True:
            method = GetUpdates(
                offset=offset, timeout=self.polling_timeout, allowed_updates=allowed_updates
            )
            try:
                updates = await self.bot(method, request_timeout=request_timeout)
                if updates:
                    fresh = await self.inbox.store([(u.update_id, payload(u)) for u in updates])
            except (TelegramNetworkError, TelegramServerError, SQLAlchemyError, OSError) as exc:
                # Nothing was confirmed: the same updates come again. Other Telegram errors
                # (a wrong token, another poller on it) stop the bot, as they should.
                await self._wait(backoff, exc)
                continue
            backoff.reset()
            if not updates:
                continue
            offset = updates[-1].update_id + 1  # confirmed by the next call, after the commit
            for update in updates:
                if update.update_id in fresh:
                    self.queue.put(update)
            if time.monotonic() - pruned > PRUNE_EVERY:
                pruned = time.monotonic()
                await self.inbox.prune()

    async def _wait(self, backoff: Backoff, exc: BaseException) -> None:
        log.warning("getUpdates or storing updates failed (%s); retry in %.1fs", exc,
                    backoff.next_delay)  # fmt: skip
        await backoff.asleep()
