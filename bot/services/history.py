"""A user's answers as a CSV document (`/export`): private ones (interviews and daily questions),
group-round ones and quiz-poll votes, oldest first.

A quiz vote is not a graded answer (picking among four options is recognition, not recall), so
`HistoryRow.is_vote` is what `/report` and `/progress` leave out; `/export` keeps it, marked as a
vote, with the option the user chose."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import aware
from bot.content.loader import QuestionBank
from bot.content.schema import Language
from bot.services.quiz import option_text
from bot.storage.answer_history import answers_of
from bot.verdicts import Verdict

QUIZ = "quiz"  # HistoryRow.where of a quiz-poll vote
COLUMNS = ("date_utc", "where", "question_id", "question", "level", "score", "verdict", "answer")


@dataclass(frozen=True)
class HistoryRow:
    when: datetime
    where: str  # private | group | quiz (a vote in a group's quiz poll)
    question_id: str
    question: str  # in the user's language; empty for a question no longer in the bank
    level: str  # empty for a question no longer in the bank
    score: float | None  # None: not graded (yet), or a quiz vote
    verdict: Verdict | None  # a quiz vote: correct | wrong
    answer: str  # a quiz vote: the chosen option's short answer in the user's language

    @property
    def is_vote(self) -> bool:
        return self.where == QUIZ


def _chosen_option(bank: QuestionBank, options: list[str], text: str, lang: Language) -> str:
    """A vote stores the chosen option's question id as its text (rounds.answers); what the user
    saw and picked is that question's short answer. Empty when it cannot be told any more."""
    option = bank.get(text) if text in options else None
    if option is None or option.short_answer is None:
        return ""
    return option_text(option, lang)


async def history(
    sessions: async_sessionmaker[AsyncSession], bank: QuestionBank, user_id: int, lang: Language
) -> list[HistoryRow]:
    async with sessions() as session:
        private, group = await answers_of(session, user_id)
    found = [("private", *r) for r in private] + [("group", *r) for r in group]
    rows = []
    for where, when, question_id, score, verdict, text, options in found:
        question = bank.get(question_id)
        if options is not None:
            # Only quiz questions have options: the one place that tells a vote from an answer.
            # Its stored 10 or 0 only ranks the group's quiz, so it gets no score here.
            where, score, text = QUIZ, None, _chosen_option(bank, options, text, lang)
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
