"""Database tables. Every schema change comes with an Alembic revision in alembic/versions.

The statuses and how they move are in bot/storage/statuses.py. Languages, levels, verdicts and
statuses are typed columns over the same VARCHARs as ever (`_choice`, `_language`): read back as
their types, and refused before they reach the database when not one of their values.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import get_args

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from bot.clock import utcnow  # column defaults; interviews.py still imports it from here
from bot.content.schema import Language, Level
from bot.storage.statuses import (
    AnswerStatus,
    AskStatus,
    DeliveryStatus,
    InterviewStatus,
    PrivateFeedback,
    RoundAnswerStatus,
    RoundKind,
    RoundQuestionStatus,
    RoundStatus,
)
from bot.verdicts import Verdict

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def _choice(values: type[StrEnum], length: int) -> Enum:
    """A StrEnum column stored as its values in a VARCHAR(length), as it always was: no native
    enum type and no CHECK constraint, so the schema (and Alembic's comparison) is unchanged."""
    return Enum(
        values,
        native_enum=False,
        validate_strings=True,
        length=length,
        values_callable=lambda members: [m.value for m in members],
    )


def _language() -> Enum:
    """Language is a Literal (what callbacks and the bank take): its values, in a VARCHAR(2)."""
    return Enum(*get_args(Language), native_enum=False, validate_strings=True, length=2)


LEVEL = 10  # the VARCHAR length of every level column
STATUS = 12  # and of most status columns


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    language: Mapped[Language] = mapped_column(_language(), default="en")
    level: Mapped[Level] = mapped_column(_choice(Level, LEVEL), default=Level.junior)
    first_name: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Interview(Base):
    __tablename__ = "interviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    level: Mapped[Level] = mapped_column(_choice(Level, LEVEL))
    question_ids: Mapped[list[str]] = mapped_column(JSON)
    position: Mapped[int] = mapped_column(Integer, default=0)  # index of the current question
    status: Mapped[InterviewStatus] = mapped_column(
        _choice(InterviewStatus, STATUS), default=InterviewStatus.active
    )
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The /interview message that started it: handled again after a restart, it finds this
    # interview instead of starting another.
    started_by: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_interviews_user_status", "user_id", "status"),)


class AskedQuestion(Base):
    """One question put to a user in a chat: the unit an answer is graded against."""

    __tablename__ = "asked_questions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    question_id: Mapped[str] = mapped_column(String(80))
    interview_id: Mapped[int | None] = mapped_column(
        ForeignKey("interviews.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    # Counted before each send of the question message: above 1, an earlier send may have
    # reached the chat without its message id being recorded (a kill in between).
    send_attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # open -> grading -> answered, or open -> skipped / closed
    status: Mapped[AskStatus] = mapped_column(_choice(AskStatus, STATUS), default=AskStatus.open)
    asked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        Index("ix_asked_questions_user_status", "user_id", "status"),
        Index("ix_asked_questions_chat_message", "chat_id", "message_id"),
    )


class Answer(Base):
    """A user's answer to one asked question; unique per asked question, so never graded twice."""

    __tablename__ = "answers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    asked_id: Mapped[int] = mapped_column(ForeignKey("asked_questions.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[str] = mapped_column(String(80))
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)
    language: Mapped[Language] = mapped_column(_language())
    status: Mapped[AnswerStatus] = mapped_column(
        _choice(AnswerStatus, STATUS), default=AnswerStatus.pending
    )
    score: Mapped[float | None] = mapped_column(Float)
    verdict: Mapped[Verdict | None] = mapped_column(_choice(Verdict, 16))
    covered: Mapped[list[str] | None] = mapped_column(JSON)
    missed: Mapped[list[str] | None] = mapped_column(JSON)
    pitfalls: Mapped[list[str] | None] = mapped_column(JSON)
    evidence: Mapped[dict[str, str] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    graded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The feedback's parts that have gone out, each marked as Telegram accepts it: a flush taken
    # over after a kill resumes after them.
    parts_sent: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    __table_args__ = (UniqueConstraint("asked_id"), Index("ix_answers_status", "status"))


# --- group rounds (issue 3) -------------------------------------------------------------------


class GroupChat(Base):
    """A group or supergroup the bot is in, with its round settings."""

    __tablename__ = "groups"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    title: Mapped[str | None] = mapped_column(String(255))
    language: Mapped[Language] = mapped_column(_language(), default="en")
    level: Mapped[Level] = mapped_column(_choice(Level, LEVEL), default=Level.junior)
    allow_everyone: Mapped[bool] = mapped_column(Boolean, default=False)  # not only admins
    active: Mapped[bool] = mapped_column(Boolean, default=True)  # the bot is a member
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# statuses.RUNNING_ROUND_STATUSES in SQL, as revision 004 created the index
RUNNING_ROUND = text("status IN ('active', 'finishing')")


class Round(Base):
    """A mock-interview round in a group: questions asked one after another, all answer."""

    __tablename__ = "rounds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    kind: Mapped[RoundKind] = mapped_column(_choice(RoundKind, 8), default=RoundKind.round)
    level: Mapped[Level] = mapped_column(_choice(Level, LEVEL))
    question_ids: Mapped[list[str]] = mapped_column(JSON)
    position: Mapped[int] = mapped_column(Integer, default=0)  # index of the current question
    seconds: Mapped[int] = mapped_column(Integer)  # time per question
    status: Mapped[RoundStatus] = mapped_column(
        _choice(RoundStatus, STATUS), default=RoundStatus.active
    )
    started_by: Mapped[int | None] = mapped_column(BigInteger)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_rounds_chat_status", "chat_id", "status"),
        # One running round per group, enforced by the database across processes.
        Index(
            "uq_rounds_one_running_per_chat",
            "chat_id",
            unique=True,
            sqlite_where=RUNNING_ROUND,
            postgresql_where=RUNNING_ROUND,
        ),
    )


class RoundQuestion(Base):
    """One question of a round; answers are replies to its message until the deadline."""

    __tablename__ = "round_questions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    position: Mapped[int] = mapped_column(Integer)
    question_id: Mapped[str] = mapped_column(String(80))
    message_id: Mapped[int | None] = mapped_column(BigInteger)  # None until posted
    poll_id: Mapped[str | None] = mapped_column(String(64))  # quiz rounds
    # Quiz rounds: the ids of the questions whose short answers are the options, and which is right
    options: Mapped[list[str] | None] = mapped_column(JSON)
    correct_option: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[RoundQuestionStatus] = mapped_column(
        _choice(RoundQuestionStatus, STATUS), default=RoundQuestionStatus.open
    )
    deadline: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # set when posted
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("round_id", "position"),
        Index("ix_round_questions_chat_message", "chat_id", "message_id"),
        Index("ix_round_questions_status", "status"),
    )


class RoundAnswer(Base):
    """A participant's answer to one round question: one per participant, the latest wins."""

    __tablename__ = "round_answers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_question_id: Mapped[int] = mapped_column(
        ForeignKey("round_questions.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    name: Mapped[str] = mapped_column(String(128))
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)
    language: Mapped[Language] = mapped_column(_language())
    status: Mapped[RoundAnswerStatus] = mapped_column(
        _choice(RoundAnswerStatus, STATUS), default=RoundAnswerStatus.pending
    )
    score: Mapped[float | None] = mapped_column(Float)
    verdict: Mapped[Verdict | None] = mapped_column(_choice(Verdict, 16))
    covered: Mapped[list[str] | None] = mapped_column(JSON)
    pitfalls: Mapped[list[str] | None] = mapped_column(JSON)
    answered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    graded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Detailed feedback in private, for participants who opted in (statuses.PrivateFeedback)
    private_feedback: Mapped[PrivateFeedback | None] = mapped_column(_choice(PrivateFeedback, 8))

    __table_args__ = (UniqueConstraint("round_question_id", "user_id"),)


class RoundFeedbackOptIn(Base):
    """A participant who wants detailed feedback on their group answers in a private chat."""

    __tablename__ = "round_feedback_optins"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# --- daily questions (issue 6) ----------------------------------------------------------------


class DailySubscription(Base):
    """A user's daily question: local time and timezone (kept after /daily off), next due."""

    __tablename__ = "daily_subscriptions"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    chat_id: Mapped[int] = mapped_column(BigInteger)
    local_time: Mapped[str] = mapped_column(String(5))  # "HH:MM" in `timezone`
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")  # IANA name or UTC+HH:MM
    level: Mapped[Level | None] = mapped_column(_choice(Level, LEVEL))  # None: the user's
    weekdays_only: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    next_due_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # UTC
    stopped_reason: Mapped[str | None] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_daily_subscriptions_due", "active", "next_due_at"),)


class DailyDelivery(Base):
    """One day's question for one user: unique per (user, local date), claimed before sending."""

    __tablename__ = "daily_deliveries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    local_date: Mapped[str] = mapped_column(String(10))  # YYYY-MM-DD in the user's timezone
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status: Mapped[DeliveryStatus] = mapped_column(
        _choice(DeliveryStatus, STATUS), default=DeliveryStatus.pending
    )
    claim_token: Mapped[str | None] = mapped_column(String(32))
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    question_id: Mapped[str | None] = mapped_column(String(80))
    ask_id: Mapped[int | None] = mapped_column(
        ForeignKey("asked_questions.id", ondelete="SET NULL"), index=True
    )
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    reason: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (
        UniqueConstraint("user_id", "local_date"),
        Index("ix_daily_deliveries_status_due", "status", "due_at"),
        Index("ix_daily_deliveries_claim_token", "claim_token"),
    )


class ReceivedUpdate(Base):
    """An update from Telegram, stored before Telegram is told it was received (the next
    getUpdates' offset), so a kill at any point leaves it here to be handled on restart."""

    __tablename__ = "received_updates"

    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    payload: Mapped[str] = mapped_column(Text)  # the update as Telegram sent it (JSON)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    handled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    # The replica handling it (bot/telegram/receiver.py); another takes it over once that
    # replica's lease has lapsed (it died), or at once when it is NULL.
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    # A handler that raised on every try (UPDATE_ATTEMPTS): when it gave up, how many tries, and
    # the exception's type (never its message, which may quote the person's text).
    failed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(String(120))


class Lease(Base):
    """Something one replica does at a time: held until `expires_at` unless renewed. Names:
    `replica:<id>` (a live replica's heartbeat), `round:<chat id>` (who runs a group's round)."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(120), primary_key=True)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


# --- spaced repetition (issue 13) -------------------------------------------------------------


class ReviewCard(Base):
    """FSRS state of one question for one person: every graded answer (private or in a group
    round) and every skip is a review of it. No foreign key on `user_id`: group participants
    need no profile, like round_answers; /forget deletes these rows itself."""

    __tablename__ = "review_cards"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    question_id: Mapped[str] = mapped_column(String(80), primary_key=True)
    state: Mapped[int] = mapped_column(Integer)  # fsrs.State: 1 learning, 2 review, 3 relearning
    step: Mapped[int | None] = mapped_column(Integer)  # learning step; None in review state
    stability: Mapped[float | None] = mapped_column(Float)
    difficulty: Mapped[float | None] = mapped_column(Float)
    due: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_review: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    reviews: Mapped[int] = mapped_column(Integer, default=0)
    lapses: Mapped[int] = mapped_column(Integer, default=0)  # reviews rated Again

    __table_args__ = (Index("ix_review_cards_user_due", "user_id", "due"),)
