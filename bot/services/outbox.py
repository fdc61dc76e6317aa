"""What the bot owes a user, read from the database: feedback, next question, summary.

Both the Telegram layer and the terminal `practice` mode deliver these items, then mark them sent,
so a restart between grading and sending loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from bot.content.schema import Question
from bot.services.readiness import ReadinessReport
from bot.verdicts import Verdict


@dataclass(frozen=True)
class QuestionItem:
    ask_id: int
    chat_id: int
    question: Question
    position: int  # 1-based
    total: int | None  # None outside an interview


@dataclass(frozen=True)
class PreviousAttempt:
    """The user's last graded answer to the same question, for "then and now" in feedback."""

    score: float
    covered: list[str]
    pitfalls: list[str]
    graded_at: datetime | None


@dataclass(frozen=True)
class FeedbackItem:
    answer_id: int
    chat_id: int
    reply_to: int | None
    question: Question
    score: float
    verdict: Verdict
    covered: list[str]
    missed: list[str]
    pitfalls: list[str]
    evidence: dict[str, str]
    streak: int | None = None  # daily questions: consecutive days answered
    # The bank question the answer reads like an answer to instead (grades.ANOTHER_QUESTION).
    answered_instead: Question | None = None
    previous: PreviousAttempt | None = None  # the question came back: the last attempt
    parts_sent: int = 0  # parts already accepted by Telegram (a flush cut short by a kill)


@dataclass(frozen=True)
class SummaryItem:
    interview_id: int
    chat_id: int
    total: int
    answered: int
    skipped: int
    average: float | None
    weakest_topics: list[str] = field(default_factory=list)
    scores: list[tuple[str, float | None]] = field(default_factory=list)
    reviews_due_soon: int = 0  # spaced-repetition reviews due within a day
    readiness: ReadinessReport | None = None  # where the user stands after it (/report)


OutboxItem = QuestionItem | FeedbackItem | SummaryItem
