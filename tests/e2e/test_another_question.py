"""An answer to another bank question is told so, in the user's language, through the real bot,
with a button that puts that question into the user's reviews."""

from __future__ import annotations

from typing import Any

import pytest

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.i18n import t
from bot.scoring.service import ScoringService
from tests.e2e.conftest import BotProcess, find_question, question_messages, wait_text
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e


def _another_questions_answer(
    scoring: ScoringService, bank: QuestionBank, asked: Question, lang: str
) -> Question:
    """A bank question whose model answer the grader reads as an answer to it, not to `asked`
    (the asked question is drawn at random: this picks the answer for it)."""
    grader = scoring.grader()
    for other in bank:
        if other.id == asked.id:
            continue
        result = grader.grade(asked, other.answer.get(lang), lang)
        if result.answers_question == other.id:
            return other
    raise AssertionError(f"no other question's model answer reads as one for {asked.id}")


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_an_answer_to_another_question_is_told_so(
    telegram: FakeTelegram, bot: BotProcess, bank: QuestionBank, scoring: ScoringService, lang: str
) -> None:
    user = telegram.user(700, language_code=lang)
    telegram.send_text(user, "/interview junior 1")
    first = (await telegram.wait_for(lambda s: question_messages(s, 700)))[0]
    asked = find_question(bank, first)
    other = _another_questions_answer(scoring, bank, asked, lang)
    count = len(telegram.bot_messages(700))
    telegram.send_text(user, other.answer.get(lang))
    note = t(lang, "another_question", question=other.question.get(lang)).split("«")[0]
    feedback = await wait_text(telegram, 700, note, after=count)
    assert other.question.get(lang)[:60] in feedback["text"]
    prefix = t(lang, "score", score="X").split("X")[0]
    assert float(feedback["text"].split(prefix)[1].split("/10")[0]) <= 1.5

    # The feedback's last part offers to ask that question later: pressed, it is due in /review.
    # (Its parts arrive one after another: wait for the one with the button.)
    def with_button(s: FakeTelegram) -> dict[str, Any] | None:
        return next((m for m in s.bot_messages(700)[count:] if m.get("reply_markup")), None)

    last = await telegram.wait_for(with_button)
    (button,) = [b for row in last["reply_markup"]["inline_keyboard"] for b in row]
    assert button["text"] == t(lang, "btn.later")
    assert button["callback_data"] == f"later:{other.id}"
    telegram.press(user, last, button["callback_data"])
    added = t(lang, "later.added", question="X").split("«")[0]
    await telegram.wait_for(
        lambda s: any(
            str(p.get("text", "")).startswith(added) for p in s.sent(method="answerCallbackQuery")
        )
    )
    telegram.press(user, last, button["callback_data"])  # twice: already there, nothing added
    await telegram.wait_for(
        lambda s: (
            t(lang, "later.already")
            in [p.get("text") for p in s.sent(method="answerCallbackQuery")]
        )
    )
    count = len(telegram.bot_messages(700))
    telegram.send_text(user, "/review")

    def review_question(s: FakeTelegram) -> list[dict[str, object]]:
        return [m for m in question_messages(s, 700) if m in s.bot_messages(700)[count:]]

    (asked_again,) = (await telegram.wait_for(review_question))[:1]
    assert find_question(bank, asked_again).id == other.id
