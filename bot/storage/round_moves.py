"""The conditional UPDATEs that move round rows: each names its move and moves a row only from a
status the move table allows (`sources` in bot/storage/statuses.py), so two replicas racing for
one move cannot both make it; the rowcount says whether this one did. Moves of a loaded row are
bot/services/rounds/states.py. Never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import RoundAnswer, RoundFeedbackOptIn, RoundQuestion
from bot.storage.results import rowcount
from bot.storage.rounds_queries import pending_answers
from bot.storage.statuses import (
    ROUND_ANSWER_MOVES,
    ROUND_QUESTION_MOVES,
    PrivateFeedback,
    RoundAnswerStatus,
    RoundQuestionStatus,
    sources,
)


def _question_moving_to(to: RoundQuestionStatus) -> ColumnElement[bool]:
    return RoundQuestion.status.in_(sources(ROUND_QUESTION_MOVES, to))


def _answer_moving_to(to: RoundAnswerStatus) -> ColumnElement[bool]:
    return RoundAnswer.status.in_(sources(ROUND_ANSWER_MOVES, to))


async def close_posted(
    session: AsyncSession, chat_id: int, now: datetime, round_question_id: int | None = None
) -> int:
    """Posted questions of the group (or the one named) -> grading; returns how many moved."""
    stmt = update(RoundQuestion).where(
        RoundQuestion.chat_id == chat_id,
        _question_moving_to(RoundQuestionStatus.grading),
        RoundQuestion.message_id.is_not(None),
    )
    if round_question_id is not None:
        stmt = stmt.where(RoundQuestion.id == round_question_id)
    result = await session.execute(stmt.values(status=RoundQuestionStatus.grading, closed_at=now))
    return rowcount(result)


async def close_question(session: AsyncSession, round_question_id: int, now: datetime) -> bool:
    """One question -> grading (its deadline passed)."""
    result = await session.execute(
        update(RoundQuestion)
        .where(
            RoundQuestion.id == round_question_id,
            _question_moving_to(RoundQuestionStatus.grading),
        )
        .values(status=RoundQuestionStatus.grading, closed_at=now)
    )
    return bool(rowcount(result))


async def end_questions(session: AsyncSession, round_id: int, now: datetime) -> None:
    """Every question of a stopped round -> done: nothing more is owed for them."""
    await session.execute(
        update(RoundQuestion)
        .where(RoundQuestion.round_id == round_id, _question_moving_to(RoundQuestionStatus.done))
        .values(status=RoundQuestionStatus.done, closed_at=now)
    )


async def mark_graded_if_complete(session: AsyncSession, round_question_id: int) -> bool:
    """grading -> graded (results owed), only if none of its answers is still pending."""
    result = await session.execute(
        update(RoundQuestion)
        .where(
            RoundQuestion.id == round_question_id,
            _question_moving_to(RoundQuestionStatus.graded),
            ~pending_answers(round_question_id).exists(),
        )
        .values(status=RoundQuestionStatus.graded)
    )
    return bool(rowcount(result))


async def store_grade(
    session: AsyncSession, answer_id: int, text: str, now: datetime, fields: dict[str, Any]
) -> bool:
    """pending -> graded with its grade, only if the answer still has the text that was graded
    (one replaced meanwhile stays pending for the next pass)."""
    result = await session.execute(
        update(RoundAnswer)
        .where(
            RoundAnswer.id == answer_id,
            _answer_moving_to(RoundAnswerStatus.graded),
            RoundAnswer.text == text,
        )
        .values(status=RoundAnswerStatus.graded, graded_at=now, **fields)
    )
    return bool(rowcount(result))


async def record_posted(
    session: AsyncSession,
    round_question_id: int,
    message_id: int | None,
    poll_id: str | None,
    deadline: datetime,
) -> None:
    """The question's message went out (or was refused: `message_id` None, and the question
    closes, as nobody can reply to a message never posted). Conditional, not read-then-write: a
    /round stop that withdrew the question while it was being posted leaves no row to update."""
    values: dict[str, object] = {
        # A placeholder id keeps a refused send from being retried forever.
        "message_id": message_id if message_id is not None else -round_question_id,
        "poll_id": poll_id,
        "deadline": deadline,
    }
    stmt = update(RoundQuestion).where(
        RoundQuestion.id == round_question_id, RoundQuestion.message_id.is_(None)
    )
    if message_id is None:
        values["status"] = RoundQuestionStatus.grading
        stmt = stmt.where(_question_moving_to(RoundQuestionStatus.grading))
    await session.execute(stmt.values(**values))


async def replace_answer(
    session: AsyncSession, answer_id: int, newer_than: int | None, values: dict[str, Any]
) -> bool:
    """Overwrite a stored answer; with `newer_than` (a message id), only if the stored one is
    older. Updates run concurrently, so the check is part of the UPDATE itself."""
    stmt = update(RoundAnswer).where(RoundAnswer.id == answer_id)
    if newer_than is not None:
        stmt = stmt.where(
            (RoundAnswer.message_id.is_(None)) | (RoundAnswer.message_id < newer_than)
        )
    return bool(rowcount(await session.execute(stmt.values(**values))))


async def owe_private_feedback(session: AsyncSession, round_question_id: int) -> None:
    """Graded answers of participants who opted in: detailed feedback owed in private."""
    opted = select(RoundFeedbackOptIn.user_id).where(RoundFeedbackOptIn.enabled)
    await session.execute(
        update(RoundAnswer)
        .where(
            RoundAnswer.round_question_id == round_question_id,
            RoundAnswer.status == RoundAnswerStatus.graded,
            RoundAnswer.user_id.in_(opted),
        )
        .values(private_feedback=PrivateFeedback.owed)
    )
