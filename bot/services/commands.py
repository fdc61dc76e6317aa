"""Parsing of command arguments, shared by Telegram and the terminal."""

from __future__ import annotations

from bot.content.schema import Level
from bot.services.interviews import MAX_COUNT


class UsageError(ValueError):
    """The arguments do not fit the command's usage line."""


def parse_interview_args(args: str | None) -> tuple[Level | None, int | None]:
    """`[junior|middle|senior] [N]` in either order; raises UsageError otherwise."""
    level: Level | None = None
    count: int | None = None
    for token in (args or "").lower().split():
        if token in Level.__members__ and level is None:
            level = Level(token)
        elif (number := _number(token)) is not None and count is None and 1 <= number <= MAX_COUNT:
            count = number
        else:
            raise UsageError(token)
    return level, count


def parse_review_args(args: str | None) -> int | None:
    """`/review [N]`: how many due questions at most; raises UsageError otherwise."""
    tokens = (args or "").split()
    if not tokens:
        return None
    number = _number(tokens[0])
    if len(tokens) == 1 and number is not None and 1 <= number <= MAX_COUNT:
        return number
    raise UsageError(tokens[0])


def _number(token: str) -> int | None:
    """The token's value when it is written in ASCII digits, else None. Not `str.isdigit()`:
    it accepts "²" and "①", which int() refuses with a ValueError no handler expects."""
    return int(token) if token.isascii() and token.isdecimal() else None
