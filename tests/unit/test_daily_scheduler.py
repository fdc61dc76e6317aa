"""The scheduler's write batcher: calls made together share one flush (one transaction)."""

from __future__ import annotations

import asyncio

import pytest

from bot.telegram.daily_scheduler import Batcher


async def test_batcher_groups_calls_and_returns_each_result() -> None:
    calls: list[list[int]] = []

    async def flush(items: list[int]) -> list[int]:
        calls.append(items)
        return [item * 10 for item in items]

    batcher: Batcher[int, int] = Batcher(flush, delay=0.01)
    results = await asyncio.gather(*(batcher.submit(i) for i in range(5)))
    assert results == [0, 10, 20, 30, 40]
    assert calls == [[0, 1, 2, 3, 4]]
    assert await batcher.submit(7) == 70  # a later call gets a flush of its own
    assert calls[-1] == [7]


async def test_batcher_passes_a_failure_to_every_caller() -> None:
    async def flush(items: list[int]) -> list[int]:
        raise RuntimeError("database is locked")

    batcher: Batcher[int, int] = Batcher(flush, delay=0.0)
    results = await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    with pytest.raises(RuntimeError):
        await batcher.submit(1)
