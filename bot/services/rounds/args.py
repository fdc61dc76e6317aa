"""`/round` and `/quiz` arguments: `stop`, or `[junior|middle|senior] [N] [seconds]`, and their
limits."""

from __future__ import annotations

from dataclasses import dataclass

from bot.content.schema import Level

DEFAULT_QUESTIONS = 5
MAX_QUESTIONS = 20
DEFAULT_SECONDS = 120
MIN_SECONDS = 10
MAX_SECONDS = 1800


class RoundUsageError(ValueError):
    """The arguments do not fit `/round [junior|middle|senior] [N] [seconds]`."""


@dataclass(frozen=True)
class RoundArgs:
    level: Level | None = None
    count: int | None = None
    seconds: int | None = None
    stop: bool = False


def parse_round_args(args: str | None, min_seconds: int = MIN_SECONDS) -> RoundArgs:
    """`stop`, or `[level] [N] [seconds]`: the first number is N, the second the seconds."""
    tokens = (args or "").lower().split()
    if tokens == ["stop"]:
        return RoundArgs(stop=True)
    level: Level | None = None
    numbers: list[int] = []
    for token in tokens:
        if token in Level.__members__ and level is None:
            level = Level(token)
        # ASCII digits only: "²".isdigit() is true, but int("²") raises ValueError, not ours.
        elif token.isascii() and token.isdecimal() and len(numbers) < 2:
            numbers.append(int(token))
        else:
            raise RoundUsageError(token)
    count = numbers[0] if numbers else None
    seconds = numbers[1] if len(numbers) > 1 else None
    if count is not None and not 1 <= count <= MAX_QUESTIONS:
        raise RoundUsageError(str(count))
    if seconds is not None and not min_seconds <= seconds <= MAX_SECONDS:
        raise RoundUsageError(str(seconds))
    return RoundArgs(level, count, seconds)
