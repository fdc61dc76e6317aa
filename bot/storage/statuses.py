"""Every stored status (and a round's kind), and which status may follow which, in one place.

StrEnum members are their strings: they compare equal to the values read back from the database,
and bind as plain text. Alembic revisions keep literal strings: they are history.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TypeVar


class InterviewStatus(StrEnum):
    """interviews.status: active -> finishing (summary owed) -> finished; stopped: replaced."""

    active = "active"
    finishing = "finishing"
    finished = "finished"
    stopped = "stopped"


class AskStatus(StrEnum):
    """asked_questions.status: open -> grading -> answered, or open -> skipped / closed."""

    open = "open"
    grading = "grading"
    answered = "answered"
    skipped = "skipped"
    closed = "closed"


class AnswerStatus(StrEnum):
    """answers.status: pending (stored, not graded) -> graded -> delivered (feedback sent)."""

    pending = "pending"
    graded = "graded"
    delivered = "delivered"


class RoundKind(StrEnum):
    """rounds.kind: free-text questions answered by reply, or quiz polls."""

    round = "round"
    quiz = "quiz"


class RoundStatus(StrEnum):
    """rounds.status: active -> finishing (leaderboard owed) -> finished; stopped: the bot left."""

    active = "active"
    finishing = "finishing"
    finished = "finished"
    stopped = "stopped"


RUNNING_ROUND_STATUSES = (RoundStatus.active, RoundStatus.finishing)  # one per group at most
ENDED_ROUND_STATUSES = (RoundStatus.finished, RoundStatus.stopped)


class RoundQuestionStatus(StrEnum):
    """round_questions.status: open -> grading (closed) -> graded (results owed) -> done."""

    open = "open"
    grading = "grading"
    graded = "graded"
    done = "done"


class RoundAnswerStatus(StrEnum):
    """round_answers.status: pending -> graded."""

    pending = "pending"
    graded = "graded"


class PrivateFeedback(StrEnum):
    """round_answers.private_feedback, for participants who opted in: owed -> sent | failed."""

    owed = "owed"
    sent = "sent"
    failed = "failed"


class DeliveryStatus(StrEnum):
    """daily_deliveries.status: pending -> claimed -> sending -> sent | failed (with a reason)."""

    pending = "pending"
    claimed = "claimed"
    sending = "sending"
    sent = "sent"
    failed = "failed"


# --- which status may follow which (the services move rows: bot/services/interview_states.py,
# bot/services/rounds/states.py; a conditional UPDATE moves a row only from a state allowed to)

E = TypeVar("E", bound=StrEnum)

INTERVIEW_MOVES: Mapping[InterviewStatus, frozenset[InterviewStatus]] = {
    InterviewStatus.active: frozenset({InterviewStatus.finishing, InterviewStatus.stopped}),
    InterviewStatus.finishing: frozenset({InterviewStatus.finished}),
    InterviewStatus.finished: frozenset(),
    InterviewStatus.stopped: frozenset(),
}
ASK_MOVES: Mapping[AskStatus, frozenset[AskStatus]] = {
    AskStatus.open: frozenset({AskStatus.grading, AskStatus.skipped, AskStatus.closed}),
    AskStatus.grading: frozenset({AskStatus.answered}),
    AskStatus.answered: frozenset(),
    AskStatus.skipped: frozenset(),
    AskStatus.closed: frozenset(),
}
ANSWER_MOVES: Mapping[AnswerStatus, frozenset[AnswerStatus]] = {
    AnswerStatus.pending: frozenset({AnswerStatus.graded}),
    AnswerStatus.graded: frozenset({AnswerStatus.delivered}),
    AnswerStatus.delivered: frozenset(),
}
ROUND_MOVES: Mapping[RoundStatus, frozenset[RoundStatus]] = {
    RoundStatus.active: frozenset({RoundStatus.finishing, RoundStatus.stopped}),
    RoundStatus.finishing: frozenset({RoundStatus.finished, RoundStatus.stopped}),
    RoundStatus.finished: frozenset(),
    RoundStatus.stopped: frozenset(),
}
ROUND_QUESTION_MOVES: Mapping[RoundQuestionStatus, frozenset[RoundQuestionStatus]] = {
    RoundQuestionStatus.open: frozenset({RoundQuestionStatus.grading, RoundQuestionStatus.done}),
    RoundQuestionStatus.grading: frozenset({RoundQuestionStatus.graded, RoundQuestionStatus.done}),
    RoundQuestionStatus.graded: frozenset({RoundQuestionStatus.done}),
    RoundQuestionStatus.done: frozenset(),
}
ROUND_ANSWER_MOVES: Mapping[RoundAnswerStatus, frozenset[RoundAnswerStatus]] = {
    RoundAnswerStatus.pending: frozenset({RoundAnswerStatus.graded}),
    RoundAnswerStatus.graded: frozenset(),
}


class IllegalMove(RuntimeError):
    """A status change its state machine does not allow: a bug, never the user's doing."""


def sources(moves: Mapping[E, frozenset[E]], to: E) -> frozenset[E]:
    """The states from which `to` may be reached."""
    return frozenset(state for state, targets in moves.items() if to in targets)


def check_move(moves: Mapping[E, frozenset[E]], source: E, to: E) -> None:
    if to not in moves[source]:
        raise IllegalMove(f"{type(to).__name__}: {source.value} -> {to.value}")
