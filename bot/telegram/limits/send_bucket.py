"""A global token bucket for everything the bot sends (Telegram allows about 30 messages/s).

Installed as an aiogram session request middleware inside RetryMiddleware, so every request and
every retry of it takes a token; getUpdates does not (it sends nothing to users).

Sends have a priority (bot/priority.py): a reply to a person who just wrote goes ahead of bulk
work (daily broadcasts, group-round questions and results), which marks itself with
`bulk_work()`. Within one priority, waiters are served in arrival order; the global rate holds
for both.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections.abc import Awaitable, Callable

from aiogram import Bot
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType

from bot.priority import Priority, current_priority

log = logging.getLogger(__name__)

# Telegram's per-group budget is counted over a minute (groups.py, shared.py).
GROUP_WINDOW_SECONDS = 60.0
UNLIMITED_METHODS = frozenset({"GetUpdates", "GetMe", "DeleteWebhook", "Close", "LogOut"})
# After take() fails: wait this long before asking again, doubling up to the cap.
RETRY_DELAY, RETRY_DELAY_MAX = 0.1, 5.0


class TokenBucket:
    """`rate` tokens a second, at most `capacity` saved up; the most urgent waiter first."""

    def __init__(
        self,
        rate: float,
        capacity: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if rate <= 0 or capacity < 1:
            raise ValueError("rate must be > 0 and capacity >= 1")
        self.rate = rate
        self.capacity = capacity
        self.clock = clock
        self.sleep = sleep
        self._tokens = capacity
        self._stamp = clock()
        self._paused_until = 0.0
        self._order = itertools.count()
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._server: asyncio.Task[None] | None = None

    async def take(self) -> float:
        """Take a token now and return 0, or return how many seconds until one is due (nothing
        taken). The shared bucket (bot/telegram/limits/shared.py) takes it from Redis."""
        now = self.clock()
        if now < self._paused_until:
            return self._paused_until - now
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._tokens >= 1 - 1e-9:  # the tolerance stops float crumbs from spinning
            self._tokens = max(0.0, self._tokens - 1)
            return 0.0
        return (1 - self._tokens) / self.rate

    async def pause(self, seconds: float) -> None:
        """Telegram said 429 with retry_after: nothing goes out before it has passed."""
        self._paused_until = max(self._paused_until, self.clock() + seconds)

    async def acquire(self, priority: Priority | None = None) -> None:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        rank = current_priority() if priority is None else priority
        heapq.heappush(self._waiters, (rank, next(self._order), turn))
        if self._server is None or self._server.done():
            self._server = asyncio.create_task(self._serve())
        await turn

    async def _serve(self) -> None:
        """Hands out tokens one at a time to the head of the queue, re-read after each wait,
        so an interactive waiter that arrives during a wait is served next."""
        delay = RETRY_DELAY
        while self._waiters:
            if self._waiters[0][2].done():  # its sender was cancelled
                heapq.heappop(self._waiters)
                continue
            try:
                wait = await self.take()
            except Exception:
                # The server must outlive a failing token source (Redis, say): if it ended,
                # every queued send would wait until some later acquire() started a new one.
                log.exception("send budget: taking a token failed; retry in %.1fs", delay)
                await self.sleep(delay)
                delay = min(RETRY_DELAY_MAX, delay * 2)
                continue
            delay = RETRY_DELAY
            if wait <= 0:
                turn = heapq.heappop(self._waiters)[2]
                if not turn.done():
                    turn.set_result(None)
                continue
            await self.sleep(wait)


class RateLimitMiddleware(BaseRequestMiddleware):
    def __init__(self, bucket: TokenBucket):
        self.bucket = bucket

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        if type(method).__name__ not in UNLIMITED_METHODS:
            await self.bucket.acquire()
        return await make_request(bot, method)
