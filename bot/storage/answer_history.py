"""A user's answers as stored, private and in group rounds: what `/export`, `/report` and
`/progress` read (bot/services/history.py). Queries over one session."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Answer, RoundAnswer, RoundQuestion
from bot.verdicts import Verdict

# (when, question id, score, verdict, text, the quiz options: None unless it is a quiz vote)
AnswerRow = tuple[datetime, str, float | None, Verdict | None, str, list[str] | None]


async def answers_of(
    session: AsyncSession, user_id: int
) -> tuple[list[AnswerRow], list[AnswerRow]]:
    """The user's private answers and their group-round answers (votes included), unsorted."""
    private = await session.execute(
        select(Answer.created_at, Answer.question_id, Answer.score, Answer.verdict,
               Answer.text).where(Answer.user_id == user_id)
    )  # fmt: skip
    group = await session.execute(
        select(RoundAnswer.answered_at, RoundQuestion.question_id, RoundAnswer.score,
               RoundAnswer.verdict, RoundAnswer.text, RoundQuestion.options)
        .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
        .where(RoundAnswer.user_id == user_id)
    )  # fmt: skip
    return (
        [(when, qid, score, verdict, text, None) for when, qid, score, verdict, text in private],
        [
            (when, qid, score, verdict, text, options)
            for when, qid, score, verdict, text, options in group
        ],
    )
