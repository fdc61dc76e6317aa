"""A clean stop lets tasks still running finish, or cancels and awaits them, so that
`asyncio.run` does not cancel a database session's close mid-rollback."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import QueuePool, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.leftover_tasks import settle_leftover_tasks
from bot.storage.engine import create_engine, create_session_factory


def _engine(tmp_path: Path) -> AsyncEngine:
    return create_engine(f"sqlite+aiosqlite:///{tmp_path / 'stop.db'}")  # as the bot's


def _checked_out(engine: AsyncEngine) -> int:
    assert isinstance(engine.pool, QueuePool)  # a file database: a pool that counts
    return engine.pool.checkedout()


async def _queries(engine: AsyncEngine, count: int | None) -> int:
    """`count` sessions one after another (None: until cancelled)."""
    sessions = create_session_factory(engine)
    done = 0
    while count is None or done < count:
        async with sessions() as session:
            await session.execute(text("select 1"))
        done += 1
    return done


def test_a_task_still_at_work_finishes_before_the_loop_ends(tmp_path: Path) -> None:
    async def main() -> tuple[list[str], asyncio.Task[int]]:
        engine = _engine(tmp_path)
        work = asyncio.create_task(_queries(engine, 40), name="work")
        await asyncio.sleep(0)  # it has started, and is far from done
        cancelled = await settle_leftover_tasks(timeout=30)
        await engine.dispose()
        return cancelled, work

    cancelled, work = asyncio.run(main())
    assert cancelled == []
    assert work.done() and not work.cancelled() and work.result() == 40


def test_a_task_that_does_not_end_is_cancelled_and_its_session_closed(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[list[str], asyncio.Task[int], int]:
        engine = _engine(tmp_path)
        busy = asyncio.create_task(_queries(engine, None), name="busy")
        while _checked_out(engine) == 0:  # wait until it holds a connection
            await asyncio.sleep(0)
        cancelled = await settle_leftover_tasks(timeout=0.05)
        checked_out = _checked_out(engine)
        await engine.dispose()
        return cancelled, busy, checked_out

    cancelled, busy, checked_out = asyncio.run(main())
    assert cancelled == ["busy"]
    assert busy.cancelled()
    assert checked_out == 0  # its session's close ran to the end: the connection is back
