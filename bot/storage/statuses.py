"""Every stored status (and a round's kind), in one place.

StrEnum members are their strings: they compare equal to the values read back from the database,
and bind as plain text. Alembic revisions keep literal strings: they are history.
"""

from __future__ import annotations

from enum import StrEnum


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
