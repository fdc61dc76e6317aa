"""Long polling that stores each batch of updates before Telegram is told they arrived.

aiogram's own polling confirms an update (the offset of the next getUpdates) while its handler
may still be waiting to run, so a kill in between loses the update. Here a batch is committed
to the inbox first, then handed to the update queue, and only then is the next getUpdates sent.
"""

from __future__ import annotations

import logging
import time

from aiogram import Bot, Dispatcher
from aiogram.exceptions import TelegramNetworkError, TelegramServerError
from aiogram.methods import GetUpdates
from aiogram.utils.backoff import Backoff, BackoffConfig
from sqlalchemy.exc import SQLAlchemyError

from bot.storage.inbox import UpdateInbox
from bot.telegram.receiver import PRUNE_EVERY, InboxReceiver
from bot.telegram.update_queue import FailurePolicy

log = logging.getLogger(__name__)

BACKOFF = BackoffConfig(min_delay=0.5, max_delay=10.0, factor=1.5, jitter=0.1)


class InboxPoller(InboxReceiver):
    sole_receiver = True  # Telegram allows one getUpdates consumer per token

    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        polling_timeout: int,
        concurrency: int = 64,
        drain_timeout: float = 20.0,
        failures: FailurePolicy | None = None,
    ):
        super().__init__(dp, bot, inbox, concurrency, drain_timeout, failures)
        self.polling_timeout = polling_timeout

    async def receive(self, allowed_updates: list[str]) -> None:
        # A webhook left from BOT_MODE=webhook would make every getUpdates fail (409). Pending
        # updates stay with Telegram and come through getUpdates.
        await self.bot.delete_webhook(drop_pending_updates=False)
        await self._poll(allowed_updates)

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
                    await self.accept(updates)
            except (TelegramNetworkError, TelegramServerError, SQLAlchemyError, OSError) as exc:
                # Nothing was confirmed: the same updates come again. Other Telegram errors
                # (a wrong token, another poller on it) stop the bot, as they should.
                await self._wait(backoff, exc)
                continue
            backoff.reset()
            if not updates:
                continue
            offset = updates[-1].update_id + 1  # confirmed by the next call, after the commit
            if time.monotonic() - pruned > PRUNE_EVERY:
                pruned = time.monotonic()
                await self.prune()

    async def _wait(self, backoff: Backoff, exc: BaseException) -> None:
        log.warning("getUpdates or storing updates failed (%s); retry in %.1fs", exc,
                    backoff.next_delay)  # fmt: skip
        await backoff.asleep()
