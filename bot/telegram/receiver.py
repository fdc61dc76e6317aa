"""What both ways of receiving updates share: each update is committed to the inbox before
Telegram is told it arrived, claimed by this replica, then handled by the update queue; what a
replica that died or stopped stored but did not finish is taken over (at start and every few
seconds); a stop lets the updates in hand finish."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from datetime import timedelta

from aiogram import Bot, Dispatcher
from aiogram.types import Update
from sqlalchemy.exc import SQLAlchemyError

from bot.clock import utcnow
from bot.metrics import TAKEOVERS
from bot.storage.inbox import REPLICA, UpdateInbox
from bot.storage.leases import new_holder, release_lease, take_lease
from bot.telegram.update_queue import FailurePolicy, UpdateQueue

log = logging.getLogger(__name__)

PRUNE_EVERY = 3600.0  # seconds between deletions of old handled updates
# A replica renews its lease every third of this; this long after it died, another replica (or
# it, restarted) takes over the updates it had stored but not finished (the survivors look every
# third of it too: 3-7 s after a kill). Short, so that a killed replica's users wait seconds, not
# half a minute; a live replica's renewal is one UPDATE, so it would have to stall for two thirds
# of this to lose its claims.
REPLICA_TTL = timedelta(seconds=5)
TAKE_OVER_POLL = 0.5  # seconds between looks at a predecessor's lease at start


def payload(update: Update) -> str:
    return update.model_dump_json(exclude_none=True)


class InboxReceiver(ABC):
    # Whether this is the only receiver of the bot's updates (one long poller per token): then
    # unfinished updates another replica holds at start are this bot's own from before a kill.
    sole_receiver = False

    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        concurrency: int = 64,
        drain_timeout: float = 20.0,
        failures: FailurePolicy | None = None,
    ):
        self.dp = dp
        self.bot = bot
        self.inbox = inbox
        self.sessions = inbox.sessions
        self.replica = new_holder()  # who claims the updates this receiver handles
        self.drain_timeout = drain_timeout
        self.queue = UpdateQueue(dp, bot, inbox, concurrency, failures=failures)
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def take_over(self) -> int:
        """Handle what no live replica is handling: left by a replica that died or stopped
        (this one before a restart included), or never claimed."""
        left = await self.inbox.claim_orphans(self.replica, utcnow())
        for _, data in left:
            self.queue.put(Update.model_validate_json(data, context={"bot": self.bot}))
        if left:
            TAKEOVERS.inc(len(left))
            log.info("handling %d update(s) left unfinished by a stopped replica", len(left))
        return len(left)

    async def _take_over_first(self) -> None:
        """Take over what is left unfinished before receiving anything new. A sole receiver
        also waits (at most twice REPLICA_TTL) for a killed predecessor's lease to lapse: its
        updates are older than any getUpdates brings now, and taking them later would run a
        person's newer message first ("/skip" before the answer written above it)."""
        await self.take_over()
        if not self.sole_receiver:
            return
        waited = 0.0
        while waited < 2 * REPLICA_TTL.total_seconds() and await self.inbox.held_elsewhere(
            self.replica
        ):
            await asyncio.sleep(TAKE_OVER_POLL)
            waited += TAKE_OVER_POLL
            await self.take_over()

    async def _keep_alive(self) -> None:
        """Renew this replica's lease (its claims are its own while it lives) and take over
        the updates of replicas whose lease lapsed."""
        while True:
            await asyncio.sleep(REPLICA_TTL.total_seconds() / 3)
            try:
                await self._renew()
                await self.take_over()
            except SQLAlchemyError:  # the database is back at the next round
                log.exception("could not renew the replica lease")

    async def prune(self) -> None:
        """Delete old handled updates; a failure only postpones it (the inbox grows a while)."""
        try:
            await self.inbox.prune()
        except SQLAlchemyError:
            log.exception("could not delete old handled updates")

    async def _renew(self) -> None:
        await take_lease(self.sessions, f"{REPLICA}{self.replica}", self.replica, REPLICA_TTL,
                         utcnow())  # fmt: skip

    async def accept(self, updates: list[Update]) -> None:
        """Store updates in one commit, then queue those not seen before (a redelivered copy
        of a stored update is not handled twice). Raises if the commit fails."""
        fresh = await self.inbox.store(
            [(u.update_id, payload(u)) for u in updates], claimed_by=self.replica
        )
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
        await self.prune()
        await self._renew()
        await self._take_over_first()
        receive = asyncio.create_task(self.receive(allowed_updates))
        stop = asyncio.create_task(self._stop.wait())
        alive = asyncio.create_task(self._keep_alive())
        try:
            await asyncio.wait({receive, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (receive, stop, alive):
                task.cancel()
            await asyncio.gather(receive, stop, alive, return_exceptions=True)
            error = None if receive.cancelled() else receive.exception()
            if error is not None or not self._stop.is_set():  # cancelled or broken: at once
                await self.queue.cancel()
        if error is not None:
            raise error
        if not await self.queue.join(self.drain_timeout):
            log.warning("stopping with updates still running; they run again on restart")
        await self.queue.cancel()
        # Stopped cleanly: what is left unhandled is taken over at once, not after the lease.
        await release_lease(self.sessions, f"{REPLICA}{self.replica}", self.replica)
