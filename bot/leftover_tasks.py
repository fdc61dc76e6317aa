"""The last step of a clean stop: tasks still running finish, or are cancelled and awaited,
before `asyncio.run` cancels whatever is left."""

from __future__ import annotations

import asyncio


async def settle_leftover_tasks(timeout: float) -> list[str]:
    """Wait up to `timeout` seconds for every other task; cancel those still running and wait
    for them as long again. Returns the names of the tasks it had to cancel.

    Why: `asyncio.run` cancels every task left when the main one returns, among them the task
    in which SQLAlchemy closes a session (it runs the close in a task of its own so that
    cancelling the session's owner cannot cut it short). Cancelled mid-rollback, the pool logs
    a traceback and drops the connection. A task cancelled here instead waits for its
    session's close, which is not cancelled."""
    current = asyncio.current_task()
    leftover = {task for task in asyncio.all_tasks() if task is not current}
    if not leftover:
        return []
    _, pending = await asyncio.wait(leftover, timeout=timeout)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=timeout)
    return sorted(task.get_name() for task in pending)
