"""Parsing of command arguments, shared by Telegram and the terminal."""

from __future__ import annotations

from bot.content.schema import Level
from bot.services.interviews import MAX_COUNT


class UsageError(ValueError):
    """The arguments do not fit the command's usage line."""


def parse_interview_args(args: str | None) -> tuple[str | None, int | None]:
    """`[junior|middle|senior] [N]` in either order; raises UsageError otherwise."""
    level: str | None = None
    count: int | None = None
    for token in (args or "").lower().split():
        if token in Level.__members__ and level is None:
            level = token
        elif token.isdigit() and count is None and 1 <= int(token) <= MAX_COUNT:
            count = int(token)
        else:
            raise UsageError(token)
    return level, count


def parse_review_args(args: str | None) -> int | None:
    """`/review [N]`: how many due questions at most; raises UsageError otherwise."""
    tokens = (args or "").split()
    if not tokens:
        return None
    if len(tokens) == 1 and tokens[0].isdigit() and 1 <= int(tokens[0]) <= MAX_COUNT:
        return int(tokens[0])
    raise UsageError(tokens[0])
