"""Group mock-interview rounds: start, answers, deadlines, grading, results and leaderboards.

Framework-free: the Telegram side parses updates, calls this service and sends the items of
`outbox()`. All state (deadlines included) lives in the database, so after a restart the ticker
picks up every round where it stopped. Time comes from an injected clock.

    args       `/round` arguments and their limits
    base       shared state (sessions, bank, scoring, clock) and helpers
    groups     a group's settings; the bot leaving it
    lifecycle  start, stop, close, expire, due
    answers    replies and quiz votes
    grading    grading closed questions
    outbox     what the group is owed, mark_sent, leaderboards
    items      the outbox's item types
    service    RoundService, composed of the above
"""

from bot.services.rounds.answers import AnswerResult, QuestionState, RoundAnswerOutcome
from bot.services.rounds.args import (
    MAX_QUESTIONS,
    MAX_SECONDS,
    MIN_SECONDS,
    RoundArgs,
    RoundUsageError,
    parse_round_args,
)
from bot.services.rounds.groups import GroupView
from bot.services.rounds.lifecycle import LATE_GRACE, RESTART_GRACE, RoundStart, StartOutcome
from bot.services.rounds.outbox import ranks
from bot.services.rounds.service import RoundService

__all__ = [
    "LATE_GRACE",
    "MAX_QUESTIONS",
    "MAX_SECONDS",
    "MIN_SECONDS",
    "RESTART_GRACE",
    "AnswerResult",
    "GroupView",
    "QuestionState",
    "RoundAnswerOutcome",
    "RoundArgs",
    "RoundService",
    "RoundStart",
    "RoundUsageError",
    "StartOutcome",
    "parse_round_args",
    "ranks",
]
