"""A user's answers as a CSV document (`/export`): private ones (interviews and daily questions)
and group-round ones, oldest first."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import aware
from bot.content.loader import QuestionBank
from bot.storage.models import Answer, RoundAnswer, RoundQuestion

COLUMNS = ("date_utc", "where", "question_id", "question", "level", "score", "verdict", "answer")


@dataclass(frozen=True)
class HistoryRow:
    when: datetime
    where: str  # private | group
    question_id: str
    question: str  # in the user's language; empty for a question no longer in the bank
    level: str
    score: float | None  # None: not graded (yet)
    verdict: str | None
    answer: str


async def history(
    sessions: async_sessionmaker[AsyncSession], bank: QuestionBank, user_id: int, lang: str
) -> list[HistoryRow]:
    async with sessions() as session:
        private = (
            await session.execute(
                select(Answer.created_at, Answer.question_id, Answer.score, Answer.verdict,
                       Answer.text).where(Answer.user_id == user_id)
            )
        ).all()  # fmt: skip
        group = (
            await session.execute(
                select(RoundAnswer.answered_at, RoundQuestion.question_id, RoundAnswer.score,
                       RoundAnswer.verdict, RoundAnswer.text)
                .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
                .where(RoundAnswer.user_id == user_id)
            )
        ).all()  # fmt: skip
    rows = []
    for where, found in (("private", private), ("group", group)):
        for when, question_id, score, verdict, text in found:
            question = bank.get(question_id)
            rows.append(
                HistoryRow(
                    when=aware(when),
                    where=where,
                    question_id=question_id,
                    question=question.question.get(lang) if question else "",
                    level=question.level if question else "",
                    score=score,
                    verdict=verdict,
                    answer=text,
                )
            )
    return sorted(rows, key=lambda r: r.when)


def history_csv(rows: list[HistoryRow]) -> bytes:
    """UTF-8 with a byte-order mark, so that spreadsheet programs read Cyrillic correctly."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow(
            (
                r.when.isoformat(timespec="seconds"),
                r.where,
                r.question_id,
                r.question,
                r.level,
                "" if r.score is None else f"{r.score:g}",
                r.verdict or "",
                r.answer,
            )
        )
    return out.getvalue().encode("utf-8-sig")
