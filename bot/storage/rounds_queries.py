"""Queries over one session for group rounds. Like the repositories, they never commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.content.schema import Language
from bot.storage.models import Round, RoundAnswer, RoundQuestion, User
from bot.storage.statuses import (
    RUNNING_ROUND_STATUSES,
    PrivateFeedback,
    RoundAnswerStatus,
    RoundQuestionStatus,
    RoundStatus,
)


@dataclass(frozen=True)
class GradedTotal:
    """One participant's graded round answers in a group: their sum, count and latest name."""

    user_id: int
    name: str | None  # the name on the latest answer
    total: float
    answers: int


async def active_round(session: AsyncSession, chat_id: int) -> Round | None:
    return await session.scalar(
        select(Round).where(Round.chat_id == chat_id, Round.status == RoundStatus.active).limit(1)
    )


async def running_round(session: AsyncSession, chat_id: int) -> Round | None:
    """A round still in progress, its leaderboard included."""
    return await session.scalar(
        select(Round)
        .where(Round.chat_id == chat_id, Round.status.in_(RUNNING_ROUND_STATUSES))
        .limit(1)
    )


async def running_rounds(session: AsyncSession, chat_id: int) -> Sequence[Round]:
    """Every round of the group still in progress, oldest first (the database allows one)."""
    return (
        await session.scalars(
            select(Round)
            .where(Round.chat_id == chat_id, Round.status.in_(RUNNING_ROUND_STATUSES))
            .order_by(Round.id)
        )
    ).all()


async def round_questions(session: AsyncSession, round_id: int) -> Sequence[RoundQuestion]:
    """The round's questions asked so far, in order."""
    return (
        await session.scalars(
            select(RoundQuestion)
            .where(RoundQuestion.round_id == round_id)
            .order_by(RoundQuestion.position)
        )
    ).all()


async def asked_in_group(session: AsyncSession, chat_id: int) -> dict[str, int]:
    """question id -> how many times a round in this group asked it."""
    rows = await session.execute(
        select(RoundQuestion.question_id, func.count())
        .where(RoundQuestion.chat_id == chat_id)
        .group_by(RoundQuestion.question_id)
    )
    return {qid: int(n) for qid, n in rows.all()}


async def participants(session: AsyncSession, round_id: int, before: int) -> dict[int, str]:
    """Who answered any question of the round before position `before`: user id -> name."""
    rows = await session.execute(
        select(RoundAnswer.user_id, RoundAnswer.name)
        .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
        .where(RoundQuestion.round_id == round_id, RoundQuestion.position < before)
        .order_by(RoundAnswer.id)
    )
    return {int(user_id): name for user_id, name in rows.all()}


async def everyone_answered(session: AsyncSession, rq: RoundQuestion) -> bool:
    """Everyone who answered an earlier question of the round has answered this one."""
    before = set(await participants(session, rq.round_id, rq.position))
    if not before:
        return False  # the first question waits for its deadline or "Next"
    now = set(
        (
            await session.scalars(
                select(RoundAnswer.user_id).where(RoundAnswer.round_question_id == rq.id)
            )
        ).all()
    )
    return before <= now


async def graded_totals(
    session: AsyncSession, chat_id: int, round_id: int | None
) -> list[GradedTotal]:
    """Per participant, the graded answers in the group (or in one round of it), unsorted."""
    stmt = (
        select(
            RoundAnswer.user_id,
            func.sum(RoundAnswer.score),
            func.count(RoundAnswer.id),
            func.max(RoundAnswer.id),
        )
        .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
        .where(RoundQuestion.chat_id == chat_id, RoundAnswer.status == RoundAnswerStatus.graded)
        .group_by(RoundAnswer.user_id)
    )
    if round_id is not None:
        stmt = stmt.where(RoundQuestion.round_id == round_id)
    rows = (await session.execute(stmt)).all()
    latest_ids = [int(r[3]) for r in rows]
    names = dict(
        (
            await session.execute(
                select(RoundAnswer.user_id, RoundAnswer.name).where(RoundAnswer.id.in_(latest_ids))
            )
        ).all()
    )
    return [
        GradedTotal(int(user), names.get(int(user)), float(total or 0.0), int(count))
        for user, total, count, _ in rows
    ]


async def question_by_message(
    session: AsyncSession, chat_id: int, message_id: int, *, lock: bool = False
) -> RoundQuestion | None:
    """The round question posted as this message. `lock`: FOR UPDATE (PostgreSQL; SQLite has
    one writer anyway), so closing the question waits for the caller's transaction."""
    stmt = select(RoundQuestion).where(
        RoundQuestion.chat_id == chat_id, RoundQuestion.message_id == message_id
    )
    return await session.scalar(stmt.with_for_update() if lock else stmt)


async def question_by_poll(session: AsyncSession, poll_id: str) -> RoundQuestion | None:
    return await session.scalar(select(RoundQuestion).where(RoundQuestion.poll_id == poll_id))


async def question_at(session: AsyncSession, round_id: int, position: int) -> RoundQuestion | None:
    return await session.scalar(
        select(RoundQuestion).where(
            RoundQuestion.round_id == round_id, RoundQuestion.position == position
        )
    )


async def questions_with_status(
    session: AsyncSession, chat_id: int | None, status: RoundQuestionStatus, *, posted: bool = False
) -> Sequence[RoundQuestion]:
    """The questions in `status` (of one group, or of all with `chat_id` None); `posted`: only
    those whose message went out."""
    stmt = select(RoundQuestion).where(RoundQuestion.status == status)
    if chat_id is not None:
        stmt = stmt.where(RoundQuestion.chat_id == chat_id)
    if posted:
        stmt = stmt.where(RoundQuestion.message_id.is_not(None))
    return (await session.scalars(stmt)).all()


async def answer_of(
    session: AsyncSession, round_question_id: int, user_id: int
) -> RoundAnswer | None:
    return await session.scalar(
        select(RoundAnswer).where(
            RoundAnswer.round_question_id == round_question_id, RoundAnswer.user_id == user_id
        )
    )


async def answers_to(session: AsyncSession, round_question_id: int) -> Sequence[RoundAnswer]:
    return (
        await session.scalars(
            select(RoundAnswer).where(RoundAnswer.round_question_id == round_question_id)
        )
    ).all()


def pending_answers(round_question_id: int) -> Select[int]:
    """The ids of the question's answers still to grade, as a statement (to read or test)."""
    return select(RoundAnswer.id).where(
        RoundAnswer.round_question_id == round_question_id,
        RoundAnswer.status == RoundAnswerStatus.pending,
    )


async def pending_answer_ids(session: AsyncSession, round_question_id: int) -> list[int]:
    return list(await session.scalars(pending_answers(round_question_id)))


@dataclass(frozen=True)
class RoundWork:
    """What may make a group due: its running questions (chat, status, deadline), and the
    groups owed a leaderboard or private feedback."""

    questions: Sequence[tuple[int, RoundQuestionStatus, datetime | None]]
    owed: set[int]


async def round_work(session: AsyncSession) -> RoundWork:
    questions = (
        await session.execute(
            select(RoundQuestion.chat_id, RoundQuestion.status, RoundQuestion.deadline)
            .join(Round, Round.id == RoundQuestion.round_id)
            .where(
                Round.status == RoundStatus.active, RoundQuestion.status != RoundQuestionStatus.done
            )
        )
    ).all()
    finishing = await session.scalars(
        select(Round.chat_id).where(Round.status == RoundStatus.finishing)
    )
    owed = await session.scalars(
        select(RoundQuestion.chat_id)
        .join(RoundAnswer, RoundAnswer.round_question_id == RoundQuestion.id)
        .where(RoundAnswer.private_feedback == PrivateFeedback.owed)
    )
    return RoundWork(
        [(chat, status, deadline) for chat, status, deadline in questions],
        set(finishing.all()) | set(owed.all()),
    )


async def owed_private_feedback(
    session: AsyncSession, chat_id: int
) -> Sequence[tuple[RoundAnswer, str, Language | None]]:
    """The group's answers owed detailed feedback in private: (answer, question id, the
    participant's language if they ever used the bot in private)."""
    rows = await session.execute(
        select(RoundAnswer, RoundQuestion.question_id, User.language)
        .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
        .outerjoin(User, User.id == RoundAnswer.user_id)
        .where(
            RoundQuestion.chat_id == chat_id,
            RoundAnswer.private_feedback == PrivateFeedback.owed,
        )
        .order_by(RoundAnswer.id)
    )
    return [(answer, question_id, language) for answer, question_id, language in rows]
