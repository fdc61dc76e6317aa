"""Telegram's limits shared through Redis: two limiter objects stand for two replicas, on one
moved-by-hand clock. Skipped with the reason where no Redis runs on 127.0.0.1:6379."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from bot.telegram.limits.shared import RedisGroupLimiter, RedisTokenBucket


class Clock:
    def __init__(self) -> None:
        self.ms = 1_700_000_000_000
        self.slept: list[float] = []

    def __call__(self) -> int:
        return self.ms

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.ms += int(seconds * 1000)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_two_replicas_share_one_bucket(redis: Redis) -> None:
    clock = Clock()
    one = RedisTokenBucket(redis, rate=10, now_ms=clock, sleep=clock.sleep)
    two = RedisTokenBucket(redis, rate=10, now_ms=clock, sleep=clock.sleep)
    assert await one.take() == 0  # the one token saved up
    assert await two.take() == pytest.approx(0.1)  # the other replica waits for the next
    clock.ms += 100
    assert await two.take() == 0
    assert await one.take() == pytest.approx(0.1)
    # 20 sends spread over both replicas take two seconds of the shared clock, not one.
    start = clock.ms
    for index in range(20):
        await (one if index % 2 else two).acquire()
    assert clock.ms - start >= 1900


async def test_a_429_pauses_every_replica(redis: Redis) -> None:
    clock = Clock()
    one = RedisTokenBucket(redis, rate=30, now_ms=clock, sleep=clock.sleep)
    two = RedisTokenBucket(redis, rate=30, now_ms=clock, sleep=clock.sleep)
    await one.pause(3)
    assert await two.take() == pytest.approx(3.0)
    await two.pause(1)  # a shorter pause never cuts a longer one short
    assert await one.take() == pytest.approx(3.0)
    clock.ms += 3000
    assert await two.take() == 0


async def test_group_budget_is_counted_across_replicas(redis: Redis) -> None:
    clock = Clock()
    one = RedisGroupLimiter(redis, per_minute=4, reserve=1, now_ms=clock, sleep=clock.sleep)
    two = RedisGroupLimiter(redis, per_minute=4, reserve=1, now_ms=clock, sleep=clock.sleep)
    await one.acquire(-100)
    assert await two.try_acquire(-100)
    await one.acquire(-100)
    assert not await two.try_acquire(-100)  # the last slot is kept for round messages
    await two.acquire(-100)  # the fourth in a minute: fits
    assert clock.slept == []
    await one.acquire(-100)  # the fifth waits until the first leaves the window
    assert clock.slept and sum(clock.slept) == pytest.approx(60.0, abs=0.01)
    await two.acquire(-200)  # another group has its own budget
    assert sum(clock.slept) == pytest.approx(60.0, abs=0.01)
