"""The global token bucket, on a fake clock: never more than `rate` sends in any second."""

from __future__ import annotations

import asyncio

import pytest

from bot.config import load_settings
from bot.priority import bulk_work
from bot.telegram.limits.send_bucket import RateLimitMiddleware, TokenBucket


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.stamps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


async def test_bucket_spaces_sends_at_the_rate() -> None:
    fake = FakeTime()
    bucket = TokenBucket(25, clock=fake.clock, sleep=fake.sleep)

    async def send() -> None:
        await bucket.acquire()
        fake.stamps.append(fake.now)

    await asyncio.gather(*(send() for _ in range(100)))
    stamps = sorted(fake.stamps)
    assert stamps[-1] == pytest.approx(99 / 25)
    for start in stamps:  # any one-second window holds at most 25 sends (+1 saved token)
        assert sum(1 for s in stamps if start <= s < start + 1.0) <= 26


async def test_bucket_refills_only_up_to_capacity() -> None:
    fake = FakeTime()
    bucket = TokenBucket(10, capacity=2, clock=fake.clock, sleep=fake.sleep)
    fake.now = 100.0  # idle for a long time: still only two sends without waiting
    for _ in range(3):
        await bucket.acquire()
    assert fake.now == pytest.approx(100.1)
    with pytest.raises(ValueError):
        TokenBucket(0)


async def test_middleware_takes_a_token_per_request_but_not_for_polling() -> None:
    fake = FakeTime()
    bucket = TokenBucket(5, clock=fake.clock, sleep=fake.sleep)
    middleware = RateLimitMiddleware(bucket)

    class SendMessage:
        pass

    class GetUpdates:
        pass

    async def make_request(bot, method):
        return type(method).__name__

    for _ in range(6):
        assert await middleware(make_request, None, SendMessage()) == "SendMessage"  # type: ignore[arg-type]
    assert fake.now == pytest.approx(1.0)
    for _ in range(20):
        await middleware(make_request, None, GetUpdates())  # type: ignore[arg-type]
    assert fake.now == pytest.approx(1.0)


def test_settings_defaults_and_limits() -> None:
    settings = load_settings()
    assert settings.daily_tick_seconds <= 30
    assert settings.daily_grace_hours == 3
    assert settings.send_rate == 25
    assert load_settings(send_rate="29.5", daily_tick_seconds="1").send_rate == 29.5


async def test_a_reply_to_a_person_goes_ahead_of_bulk_work() -> None:
    """Daily broadcasts and round results queue behind a reply to someone who just wrote,
    and the global rate still holds for both."""
    fake = FakeTime()
    bucket = TokenBucket(2, clock=fake.clock, sleep=fake.sleep)
    served: list[tuple[str, float]] = []

    async def send(name: str) -> None:
        await bucket.acquire()
        served.append((name, fake.now))

    async def broadcast() -> None:
        with bulk_work():
            await asyncio.gather(*(send(f"bulk{i}") for i in range(6)))

    bulk = asyncio.create_task(broadcast())
    while len(served) < 2:  # the broadcast is under way, four sends still waiting
        await asyncio.sleep(0)
    waiting = {f"bulk{i}" for i in range(6)} - {name for name, _ in served}
    await send("reply")
    await bulk
    names = [name for name, _ in served]
    # At most the send whose token was already being waited for goes before the reply.
    assert len(waiting) >= 3 and len(waiting & set(names[: names.index("reply")])) <= 1, names
    stamps = [at for _, at in served]
    assert stamps == sorted(stamps) and stamps[-1] == pytest.approx(6 / 2)
