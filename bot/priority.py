"""Who is waiting: a person who just wrote, the next question after their feedback, or bulk
work (daily broadcasts, group rounds).

The send queue (bot/telegram/limits/send_bucket.py) and the grading queue
(bot/scoring/service.py) both serve interactive work first. Bulk work marks itself with
`bulk_work()`; tasks created inside inherit the mark (a task copies its creator's context).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from enum import IntEnum


class Priority(IntEnum):
    interactive = 0  # lower is served first: a reply to someone who just wrote
    follow_up = 1  # the next question, sent after that reply: it is read after the feedback
    bulk = 2


_priority: ContextVar[Priority] = ContextVar("work_priority", default=Priority.interactive)


def current_priority() -> Priority:
    return _priority.get()


@contextlib.contextmanager
def working_at(priority: Priority) -> Iterator[None]:
    """Work done here, and in tasks created here, is served at `priority`."""
    token = _priority.set(priority)
    try:
        yield
    finally:
        _priority.reset(token)


def bulk_work() -> contextlib.AbstractContextManager[None]:
    """Work done here, and in tasks created here, waits behind interactive work."""
    return working_at(Priority.bulk)
