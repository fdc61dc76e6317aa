"""The per-group message budget, with a fake clock: no real waiting."""

from __future__ import annotations

from bot.telegram.limits.groups import GroupLimiter


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


async def test_round_messages_wait_for_the_window() -> None:
    time = FakeTime()
    limiter = GroupLimiter(per_minute=20, clock=time.clock, sleep=time.sleep)
    sent_at = []
    for _ in range(45):
        await limiter.acquire(-1)
        sent_at.append(time.now)
    # Never more than 20 in any 60-second window.
    for start in sent_at:
        assert sum(1 for t in sent_at if start <= t < start + 60) <= 20
    assert sent_at[19] == 0.0 and sent_at[20] >= 60.0 and sent_at[40] >= 120.0
    await limiter.acquire(-2)  # another group has its own budget
    assert time.now == sent_at[-1]


async def test_notes_leave_room_for_the_round() -> None:
    time = FakeTime()
    limiter = GroupLimiter(per_minute=20, reserve=5, clock=time.clock, sleep=time.sleep)
    allowed = sum([await limiter.try_acquire(-1) for _ in range(30)])
    assert allowed == 15  # five slots stay free for questions and results
    for _ in range(5):
        await limiter.acquire(-1)
    assert time.slept == []
    time.now += 61
    assert await limiter.try_acquire(-1)
