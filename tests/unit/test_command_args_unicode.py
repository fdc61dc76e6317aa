"""Command arguments in non-ASCII digits ("²", "①", "٣") are bad arguments, not crashes.

`str.isdigit()` is true for them but `int()` raises ValueError, which no handler catches: the
user got no reply at all instead of the usage line.
"""

from __future__ import annotations

import pytest

from bot.services.commands import UsageError, parse_interview_args, parse_review_args
from bot.services.rounds import RoundUsageError, parse_round_args

# Superscript and circled digits fail int(); Arabic-Indic and full-width ones pass it but are
# still not what the usage line asks for, so all of them get the usage reply.
UNICODE_DIGITS = ["²", "①", "³²", "٣", "５"]


@pytest.mark.parametrize("token", UNICODE_DIGITS)
def test_interview_rejects_unicode_digits(token: str) -> None:
    with pytest.raises(UsageError):
        parse_interview_args(token)
    with pytest.raises(UsageError):
        parse_interview_args(f"junior {token}")


@pytest.mark.parametrize("token", UNICODE_DIGITS)
def test_review_rejects_unicode_digits(token: str) -> None:
    with pytest.raises(UsageError):
        parse_review_args(token)


@pytest.mark.parametrize("token", UNICODE_DIGITS)
def test_round_and_quiz_reject_unicode_digits(token: str) -> None:
    with pytest.raises(RoundUsageError):
        parse_round_args(f"junior {token}")
    with pytest.raises(RoundUsageError):
        parse_round_args(f"junior 2 {token}")


def test_ascii_digits_still_parse() -> None:
    assert parse_interview_args("junior 3") == ("junior", 3)
    assert parse_review_args("7") == 7
    args = parse_round_args("middle 2 60")
    assert (args.level, args.count, args.seconds) == ("middle", 2, 60)
