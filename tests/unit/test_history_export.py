"""`/export`'s rows and file: private and group answers of one user, oldest first, as CSV that
a spreadsheet reads back exactly."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from bot.content.loader import QuestionBank
from bot.services.history import COLUMNS, history, history_csv
from bot.storage.models import (
    Answer,
    AskedQuestion,
    GroupChat,
    Round,
    RoundAnswer,
    RoundQuestion,
    User,
)

GROUP = -100


async def test_private_and_group_answers_oldest_first(sessions, bank: QuestionBank) -> None:
    async with sessions() as session, session.begin():
        session.add_all([User(id=1, language="ru"), User(id=2), GroupChat(id=GROUP)])
        await session.flush()
        asked = AskedQuestion(user_id=1, chat_id=1, question_id="zero-grad")
        other = AskedQuestion(user_id=2, chat_id=2, question_id="zero-grad")
        rnd = Round(chat_id=GROUP, level="junior", question_ids=["autograd"], seconds=60)
        session.add_all([asked, other, rnd])
        await session.flush()
        rq = RoundQuestion(round_id=rnd.id, chat_id=GROUP, position=0, question_id="autograd")
        session.add(rq)
        await session.flush()
        session.add_all(
            [
                Answer(asked_id=asked.id, user_id=1, question_id="zero-grad", text="позже",
                       language="ru", score=6.5, verdict="partial",
                       created_at=datetime(2026, 11, 2, 9, tzinfo=UTC)),
                Answer(asked_id=other.id, user_id=2, question_id="zero-grad", text="not mine",
                       language="en", created_at=datetime(2026, 11, 1, tzinfo=UTC)),
                RoundAnswer(round_question_id=rq.id, user_id=1, name="Ann", text="раньше",
                            language="ru", answered_at=datetime(2026, 11, 1, 8, tzinfo=UTC)),
            ]
        )  # fmt: skip
    rows = await history(sessions, bank, 1, "ru")
    assert [(r.where, r.question_id, r.answer, r.score) for r in rows] == [
        ("group", "autograd", "раньше", None),  # not graded yet: no score
        ("private", "zero-grad", "позже", 6.5),
    ]
    assert rows[1].question == bank.questions["zero-grad"].question.ru
    assert rows[1].level == bank.questions["zero-grad"].level
    assert await history(sessions, bank, 3, "en") == []


async def test_csv_reads_back_exactly(sessions, bank: QuestionBank) -> None:
    tricky = 'a, "quoted"\nsecond line; <b>&amp;</b> ёжик'
    async with sessions() as session, session.begin():
        session.add(User(id=1))
        await session.flush()
        asked = AskedQuestion(user_id=1, chat_id=1, question_id="retired-question")
        session.add(asked)
        await session.flush()
        session.add(
            Answer(asked_id=asked.id, user_id=1, question_id="retired-question", text=tricky,
                   language="en", score=7.0, verdict="good")
        )  # fmt: skip
    data = history_csv(await history(sessions, bank, 1, "en"))
    assert data.startswith("\ufeff".encode())  # spreadsheets then read UTF-8 Cyrillic
    (row,) = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert tuple(row) == COLUMNS
    assert row["answer"] == tricky and row["score"] == "7" and row["verdict"] == "good"
    assert row["question"] == "" and row["level"] == ""  # a question no longer in the bank
