"""The next question after a feedback waits behind other people's feedback; a first question
and the feedback itself do not."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bot.content.loader import QuestionBank
from bot.priority import Priority, current_priority
from bot.services.outbox import FeedbackItem, OutboxItem, QuestionItem
from bot.telegram.delivery import Delivery


class _Bot:
    def __init__(self) -> None:
        self.sends: list[tuple[str, Priority]] = []

    async def send_message(self, chat_id: int, text: str, **_: Any) -> SimpleNamespace:
        # A question carries its Skip button; feedback none here (no "ask me later" either).
        kind = "question" if _.get("reply_markup") is not None else "feedback"
        self.sends.append((kind, current_priority()))
        return SimpleNamespace(message_id=len(self.sends))


class _Interviews:
    def __init__(self, items: list[OutboxItem]) -> None:
        self.items = items

    async def outbox(self, user_id: int) -> list[OutboxItem]:
        items, self.items = self.items, []
        return items

    async def begin_send(self, item: QuestionItem) -> None:
        pass

    async def mark_sent(self, item: OutboxItem, message_id: int | None) -> None:
        pass


async def test_next_question_after_feedback_is_a_follow_up(bank: QuestionBank) -> None:
    question = bank.questions["zero-grad"]
    feedback = FeedbackItem(1, 7, None, question, 6.0, "partial", [], [], [], {})
    asked = QuestionItem(2, 7, question, 2, 3)
    bot, interviews = _Bot(), _Interviews([asked])
    delivery = Delivery(bot, interviews)  # type: ignore[arg-type]
    await delivery.flush(7, "en")  # a first question: the person is waiting for it
    interviews.items = [feedback, asked]
    await delivery.flush(7, "en")
    assert bot.sends[0] == ("question", Priority.interactive)
    assert ("feedback", Priority.interactive) in bot.sends[1:]
    assert bot.sends[-1] == ("question", Priority.follow_up)
    assert current_priority() == Priority.interactive  # nothing leaks out of the flush
