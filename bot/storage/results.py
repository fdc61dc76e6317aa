"""What a statement's result tells beyond its rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import CursorResult, Result


def rowcount(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE matched. AsyncSession.execute is typed to return a
    Result; for these statements it is a CursorResult, which carries the count."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"{type(result).__name__} has no row count")
    return result.rowcount
