"""What both ways of receiving updates share: each update is committed to the inbox before
Telegram is told it arrived, then handled by the update queue; what a previous process stored
but did not finish is handled again at start; a stop lets the updates in hand finish."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod

from aiogram import Bot, Dispatcher
from aiogram.types import Update

from bot.storage.inbox import UpdateInbox
from bot.telegram.update_queue import UpdateQueue

log = logging.getLogger(__name__)

PRUNE_EVERY = 3600.0  # seconds between deletions of old handled updates


def payload(update: Update) -> str:
    return update.model_dump_json(exclude_none=True)


class InboxReceiver(ABC):
    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        concurrency: int = 64,
        drain_timeout: float = 20.0,
    ):
        self.dp = dp
        self.bot = bot
        self.inbox = inbox
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

    async def accept(self, updates: list[Update]) -> None:
        """Store updates in one commit, then queue those not seen before (a redelivered copy
        of a stored update is not handled twice). Raises if the commit fails."""
        fresh = await self.inbox.store([(u.update_id, payload(u)) for u in updates])
        for update in updates:
            if update.update_id in fresh:
                self.queue.put(update)

    @abstractmethod
    async def receive(self, allowed_updates: list[str]) -> None:
        """Receive updates until cancelled; return or raise only on a fatal error."""

    async def run(self, allowed_updates: list[str]) -> None:
        """Receive until stop(), then let the updates in hand finish for up to `drain_timeout`
        (any that do not stay in the inbox for the next start). Cancelled, it stops at once,
        as a kill would."""
        await self.inbox.prune()
        await self.replay()
        receive = asyncio.create_task(self.receive(allowed_updates))
        stop = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({receive, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (receive, stop):
                task.cancel()
            await asyncio.gather(receive, stop, return_exceptions=True)
            error = None if receive.cancelled() else receive.exception()
            if error is not None or not self._stop.is_set():  # cancelled or broken: at once
                await self.queue.cancel()
        if error is not None:
            raise error
        if not await self.queue.join(self.drain_timeout):
            log.warning("stopping with updates still running; they run again on restart")
        await self.queue.cancel()
