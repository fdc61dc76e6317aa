"""Telegram's limits shared by every replica through Redis (REDIS_URL): one global token bucket,
one pause after a 429, and each group's messages per minute.

Each decision is one Lua script, so it is atomic in Redis however many replicas ask at once. The
clock is the caller's (milliseconds): replicas on one host or on NTP agree to well within the
bucket's tick, and tests can move it. Without REDIS_URL the in-process versions in
send_bucket.py and groups.py are used.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.telegram.limits.send_bucket import GROUP_WINDOW_SECONDS as WINDOW_SECONDS
from bot.telegram.limits.send_bucket import TokenBucket

log = logging.getLogger(__name__)

PREFIX = "mock-interview-bot"
# A send token from Redis takes a millisecond; past this, Redis counts as down.
REDIS_TIMEOUT = 1.0
# While Redis is down the bucket asks it again only this often, not for every token.
REDIS_RETRY = 5.0

# KEYS: bucket, pause. ARGV: rate per second, capacity, now in ms.
# Returns 0 when a token was taken, else the milliseconds until one is due.
TAKE = """
local now = tonumber(ARGV[3])
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused > now then return paused - now end
local rate, capacity = tonumber(ARGV[1]), tonumber(ARGV[2])
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or ARGV[2])
local stamp = tonumber(redis.call('HGET', KEYS[1], 'stamp') or ARGV[3])
tokens = math.min(capacity, tokens + math.max(0, now - stamp) * rate / 1000)
local wait = 0
if tokens >= 0.999999 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'stamp', tostring(math.max(now, stamp)))
redis.call('PEXPIRE', KEYS[1], 60000)
return wait
"""

# KEYS: pause. ARGV: the end of the pause (ms), now (ms). Only ever moves the end later.
PAUSE = """
local till = tonumber(ARGV[1])
if till > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', math.max(1, till - tonumber(ARGV[2])))
end
return 0
"""

# KEYS: the chat's window (a sorted set of send times). ARGV: now (ms), window (ms), limit,
# a unique member. Returns 0 when the message was counted, else the ms until a slot frees.
WINDOW = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""


def wall_ms() -> int:
    return int(time.time() * 1000)


class RedisTokenBucket(TokenBucket):
    """The global send budget, shared: each token is taken in Redis. Priorities still order
    this process's waiters (TokenBucket's queue); the rate holds across all replicas.

    While Redis fails (an error, or no answer within REDIS_TIMEOUT) this process falls back to
    its own bucket at the same rate, and to its own 429 pause: replies keep going out during an
    outage, at worst at replicas × `rate` in all, where Telegram's 429 and the retry middleware
    take over; stalling every send until Redis is back would silence the bot instead."""

    def __init__(
        self,
        redis: Redis,
        rate: float,
        capacity: float = 1.0,
        name: str = "send",
        now_ms: Callable[[], int] = wall_ms,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(rate, capacity, clock=clock, sleep=sleep)
        self.redis = redis
        self.now_ms = now_ms
        self.keys = [f"{PREFIX}:{name}:bucket", f"{PREFIX}:{name}:paused"]
        self._take = redis.register_script(TAKE)
        self._pause = redis.register_script(PAUSE)
        self._redis_down_until: float | None = None  # `clock` time to ask Redis again

    async def take(self) -> float:
        if self._redis_down_until is not None and self.clock() < self._redis_down_until:
            return await super().take()
        try:
            async with asyncio.timeout(REDIS_TIMEOUT):
                wait = await self._take(
                    keys=self.keys, args=[self.rate, self.capacity, self.now_ms()]
                )
        except (RedisError, OSError, TimeoutError) as exc:
            if self._redis_down_until is None:
                log.warning("send budget: Redis failed (%r); using this process's own", exc)
            self._redis_down_until = self.clock() + REDIS_RETRY
            return await super().take()
        if self._redis_down_until is not None:
            log.info("send budget: Redis is back; sharing the budget again")
            self._redis_down_until = None
        return int(wait) / 1000

    async def pause(self, seconds: float) -> None:
        # Kept locally as well, for the fallback bucket if Redis fails before it has passed.
        await super().pause(seconds)
        now = self.now_ms()
        try:
            async with asyncio.timeout(REDIS_TIMEOUT):
                await self._pause(keys=self.keys[1:], args=[now + int(seconds * 1000), now])
        except (RedisError, OSError, TimeoutError) as exc:
            log.warning("send budget: could not share a 429 pause through Redis (%r)", exc)


class RedisGroupLimiter:
    """Each group's messages per minute, counted across replicas (same interface as
    groups.GroupLimiter)."""

    def __init__(
        self,
        redis: Redis,
        per_minute: int = 20,
        reserve: int = 5,
        now_ms: Callable[[], int] = wall_ms,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        self.redis = redis
        self.per_minute = per_minute
        self.reserve = min(reserve, per_minute - 1)  # room kept for round messages
        self.now_ms = now_ms
        self.sleep = sleep
        self._window = redis.register_script(WINDOW)
        # Members must be unique across replicas: two sends in the same millisecond both count.
        self._ids = itertools.count()
        self._me = f"{os.getpid()}-{id(self)}"

    async def _count(self, chat_id: int, limit: int) -> float:
        member = f"{self._me}-{next(self._ids)}"
        key = f"{PREFIX}:group:{chat_id}"
        window_ms = int(WINDOW_SECONDS * 1000)
        wait = await self._window(keys=[key], args=[self.now_ms(), window_ms, limit, member])
        return int(wait) / 1000

    async def acquire(self, chat_id: int) -> None:
        while (wait := await self._count(chat_id, self.per_minute)) > 0:
            await self.sleep(wait)

    async def try_acquire(self, chat_id: int) -> bool:
        return await self._count(chat_id, self.per_minute - self.reserve) == 0
