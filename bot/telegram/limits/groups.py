"""Per-group message budget: Telegram allows a bot about 20 messages a minute in one group.

A sliding window per chat. Round messages (questions, results, leaderboards) wait for a slot;
short notes (refusals, hints) are sent only while the window has room to spare, so they never
delay a round. A 429 that slips through is still waited out by the shared RetryMiddleware.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.telegram.limits.send_bucket import GROUP_WINDOW_SECONDS as WINDOW_SECONDS


class GroupBudget(Protocol):
    """A group's message budget: this process's (GroupLimiter) or every replica's (Redis)."""

    async def acquire(self, chat_id: int) -> None: ...
    async def try_acquire(self, chat_id: int) -> bool: ...


class GroupLimiter:
    def __init__(
        self,
        per_minute: int = 20,
        reserve: int = 5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        self.per_minute = per_minute
        self.reserve = min(reserve, per_minute - 1)  # room kept for round messages
        self.clock = clock
        self.sleep = sleep
        self._sent: defaultdict[int, deque[float]] = defaultdict(deque)
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)

    def _used(self, chat_id: int) -> int:
        window = self._sent[chat_id]
        horizon = self.clock() - WINDOW_SECONDS
        while window and window[0] <= horizon:
            window.popleft()
        return len(window)

    async def acquire(self, chat_id: int) -> None:
        """Wait until one more message fits in the chat's window, and count it."""
        async with self._locks[chat_id]:
            while self._used(chat_id) >= self.per_minute:
                oldest = self._sent[chat_id][0]
                await self.sleep(max(0.01, oldest + WINDOW_SECONDS - self.clock()))
            self._sent[chat_id].append(self.clock())

    async def try_acquire(self, chat_id: int) -> bool:
        """Count a low-priority message if the window has spare room; never waits."""
        if self._locks[chat_id].locked() or (self._used(chat_id) >= self.per_minute - self.reserve):
            return False
        self._sent[chat_id].append(self.clock())
        return True
