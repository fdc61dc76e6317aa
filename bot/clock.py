"""The one home of time: the clock type services take, UTC now, and reading stored datetimes.

Services take a `Clock` (tests inject one they move by hand) and never call `datetime.now`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import overload

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def aware(value: datetime) -> datetime: ...
@overload
def aware(value: None) -> None: ...
def aware(value: datetime | None) -> datetime | None:
    """SQLite hands datetimes back naive; every stored one is UTC. None stays None."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value
