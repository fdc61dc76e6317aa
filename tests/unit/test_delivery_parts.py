"""A feedback of several messages cut short after its first part (a kill, a network failure):
the next flush, on this replica or a survivor, sends only the parts that had not gone out."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import SendMessage
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.services.interviews import InterviewService
from bot.storage.models import Answer, AskedQuestion
from bot.storage.statuses import AnswerStatus
from bot.telegram.delivery import Delivery
from bot.telegram.rendering import render_feedback
from bot.verdicts import Verdict


class Bot:
    """Records what it sends; `fail_at`: the send (counted from 1) that fails as a dropped
    connection would."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.texts: list[str] = []
        self.fail_at = fail_at

    async def send_message(self, chat_id: int, text: str, **_: Any) -> SimpleNamespace:
        if self.fail_at is not None and len(self.texts) + 1 == self.fail_at:
            raise TelegramNetworkError(SendMessage(chat_id=chat_id, text=text), "dropped")
        self.texts.append(text)
        return SimpleNamespace(message_id=100 + len(self.texts))


async def test_a_takeover_sends_only_the_feedback_parts_not_yet_sent(
    sessions: Any, bank: QuestionBank, scoring: Any
) -> None:
    interviews = InterviewService(sessions, bank, scoring, random.Random(3))
    await interviews.ensure_user(5, "en")
    await interviews.start(5, 5, "junior", 2)
    await Delivery(Bot(), interviews).flush(5, "en")  # type: ignore[arg-type]  # the question
    async with sessions() as session, session.begin():
        ask = (await session.scalars(select(AskedQuestion))).one()
        question = bank.questions[ask.question_id]
        session.add(
            Answer(
                asked_id=ask.id, user_id=5, question_id=ask.question_id, text="an answer",
                language="en", status=AnswerStatus.graded, score=4.0, verdict=Verdict.partial,
                covered=[question.key_points[0].id],
                missed=[p.id for p in question.key_points[1:]], pitfalls=[], evidence={},
            )
        )  # fmt: skip
    [owed] = [i for i in await interviews.outbox(5) if hasattr(i, "answer_id")]
    parts = [p.as_html() for p in render_feedback(owed, "en")]
    assert len(parts) >= 2

    first = Bot(fail_at=2)  # the first part goes out, then the connection drops
    with pytest.raises(TelegramNetworkError):
        await Delivery(first, interviews).flush(5, "en")  # type: ignore[arg-type]
    survivor = Bot()
    await Delivery(survivor, interviews).flush(5, "en")  # type: ignore[arg-type]

    assert first.texts == parts[:1]
    assert survivor.texts[: len(parts) - 1] == parts[1:]  # then the next question
    async with sessions() as session:
        answer = (await session.scalars(select(Answer))).one()
        assert answer.status == AnswerStatus.delivered
