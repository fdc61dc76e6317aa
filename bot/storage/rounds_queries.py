"""Queries over one session for group rounds. Like the repositories, they never commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Round, RoundAnswer, RoundQuestion
from bot.storage.statuses import RUNNING_ROUND_STATUSES, RoundAnswerStatus, RoundStatus


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
