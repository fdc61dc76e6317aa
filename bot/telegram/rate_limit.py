"""A global token bucket for everything the bot sends (Telegram allows about 30 messages/s).

Installed as an aiogram session request middleware inside RetryMiddleware, so every request and
every retry of it takes a token; getUpdates does not (it sends nothing to users).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from aiogram import Bot
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType

UNLIMITED_METHODS = frozenset({"GetUpdates", "GetMe", "DeleteWebhook", "Close", "LogOut"})


class TokenBucket:
    """`rate` tokens a second, at most `capacity` saved up. Waiters are served in order."""

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
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self) -> None:
        async with self._lock:  # FIFO: asyncio.Lock wakes waiters in arrival order
            self._refill()
            while self._tokens < 1 - 1e-9:  # the tolerance stops float crumbs from spinning
                await self.sleep((1 - self._tokens) / self.rate)
                self._refill()
            self._tokens = max(0.0, self._tokens - 1)


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
