"""A failing token source (Redis down, a bug) must not leave queued sends waiting forever:
the bucket's server logs, backs off and tries again, and the Redis bucket falls back to this
process's own bucket while Redis errs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.telegram.limits.send_bucket import TokenBucket
from bot.telegram.limits.shared import RedisTokenBucket


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


class FlakyBucket(TokenBucket):
    """take() raises for its first `failures` calls, then hands out tokens as usual."""

    def __init__(self, failures: int, fake: FakeTime) -> None:
        super().__init__(10, clock=fake.clock, sleep=fake.sleep)
        self.failures = failures

    async def take(self) -> float:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("token source failed")
        return await super().take()


@pytest.mark.parametrize("failures", [1, 5])
async def test_waiters_are_served_after_take_fails(failures: int) -> None:
    fake = FakeTime()
    bucket = FlakyBucket(failures, fake)
    # Without the fix the server task dies on the first error and these wait forever.
    async with asyncio.timeout(5):
        await asyncio.gather(*(bucket.acquire() for _ in range(20)))
    assert bucket.failures == 0
    assert bucket._server is not None and not bucket._server.cancelled()


class FlakyRedis:
    """Enough of redis.asyncio.Redis for RedisTokenBucket: each script call fails while
    `down`, else gives a token (0 ms to wait)."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    def register_script(self, script: str) -> Any:
        async def run(keys: list[str], args: list[Any]) -> int:
            self.calls += 1
            if self.down:
                raise RedisConnectionError("Connection refused")
            return 0

        return run


async def test_redis_bucket_falls_back_to_its_own_while_redis_is_down() -> None:
    fake = FakeTime()
    redis = FlakyRedis()
    bucket = RedisTokenBucket(redis, rate=10, clock=fake.clock, sleep=fake.sleep)  # type: ignore[arg-type]
    async with asyncio.timeout(5):
        await asyncio.gather(*(bucket.acquire() for _ in range(20)))
    # Served by the local bucket at the same rate: 20 sends at 10/s, one token saved up.
    assert fake.now == pytest.approx(1.9)
    assert redis.calls < 20  # not asked again for every token while it is down
    await bucket.pause(3)  # a 429 during the outage still pauses this process's sends
    start = fake.now
    await bucket.acquire()
    assert fake.now - start >= 3
    redis.down = False
    fake.now += 60  # past the retry interval: Redis is used again
    before = redis.calls
    await bucket.acquire()
    assert redis.calls > before


class HungRedis(FlakyRedis):
    """Redis that takes the connection and never answers."""

    def register_script(self, script: str) -> Any:
        async def run(keys: list[str], args: list[Any]) -> int:
            self.calls += 1
            await asyncio.Event().wait()
            return 0

        return run


async def test_redis_that_never_answers_does_not_hold_up_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("bot.telegram.limits.shared.REDIS_TIMEOUT", 0.05)
    fake = FakeTime()
    redis = HungRedis()
    bucket = RedisTokenBucket(redis, rate=10, clock=fake.clock, sleep=fake.sleep)  # type: ignore[arg-type]
    async with asyncio.timeout(5):
        await asyncio.gather(*(bucket.acquire() for _ in range(5)))
        await bucket.pause(1)  # sharing the pause times out too; it is kept locally
    assert redis.calls == 2  # one take timed out, then the local bucket until REDIS_RETRY
