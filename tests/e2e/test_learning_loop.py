"""The learning loop through aiogram, HTTP and the fake Bot API: /progress with a real chart
photo, a review that comes back when the injected clock moves, /report, /export, /forget."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from fsrs import Rating
from PIL import Image

from bot.content.loader import QuestionBank
from bot.i18n import t
from bot.scoring.service import ScoringService
from bot.services.reviews import rating_for
from tests.e2e.conftest import find_question, question_messages, wait_text
from tests.e2e.daily_helpers import Clock, DailyBot
from tests.fake_telegram import FakeTelegram, parse_html

pytestmark = pytest.mark.e2e

WORDS = {
    "en": {
        "empty": "No graded answers yet",
        "summary": "Average score",
        "readiness": "Readiness:",
        "due": {1: "Due for review within a day: 1 question", 2: "within a day: 2 questions"},
        "progress": "Your progress: 2 graded answers",
        "none_yet": "Nothing to review yet",
        "not_due": "is due in 1 minute",
        "started": "Review: 1 question due",
        "report": "Readiness by topic",
        "deleted": "deleted",
    },
    "ru": {
        "empty": "Оценённых ответов пока нет",
        "summary": "Средняя оценка",
        "readiness": "Готовность:",
        "due": {1: "К повторению в ближайшие сутки: 1 вопрос", 2: "в ближайшие сутки: 2 вопроса"},
        "progress": "Ваш прогресс: 2 оценённых ответа",
        "none_yet": "Повторять пока нечего",
        "not_due": "через 1 минуту",
        "started": "Повторение: 1 вопрос",
        "report": "Готовность по темам",
        "deleted": "удален",
    },
}


def buttons(message: dict) -> list[str]:
    markup = message.get("reply_markup") or {}
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_progress_review_report_export_forget(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank, lang: str
) -> None:
    words = WORDS[lang]
    clock = Clock(datetime.now(UTC))
    bot = DailyBot(telegram, db_url, scoring, clock)
    await bot.start(telegram)
    try:
        chat = 400 if lang == "en" else 401
        user = telegram.user(chat, language_code=lang)

        # Nothing yet: a short text and a button to start, not an empty chart.
        telegram.send_text(user, "/progress")
        empty = await wait_text(telegram, chat, words["empty"])
        assert buttons(empty) == ["learn:int"]
        telegram.send_text(user, "/review")
        await wait_text(telegram, chat, words["none_yet"])

        # Two questions: one not known (a failed review), one answered with the model answer.
        telegram.send_text(user, "/interview junior 2")
        first_msg = (await telegram.wait_for(lambda s: question_messages(s, chat)))[0]
        failed = find_question(bank, first_msg)
        telegram.send_text(user, "I don't know" if lang == "en" else "Не знаю")
        second_msg = (await telegram.wait_for(lambda s: question_messages(s, chat)[1:]))[0]
        second = find_question(bank, second_msg)
        count = len(telegram.bot_messages(chat))
        telegram.send_text(user, second.answer.get(lang))
        prefix = t(lang, "score", score="X").split("X")[0]
        feedback = await wait_text(telegram, chat, prefix, after=count)
        summary = await wait_text(telegram, chat, words["summary"], after=count)
        assert words["readiness"] in summary["text"] and "/report" in summary["text"]
        # The model answer is usually excellent (Easy: not due again within a day); where the
        # grader flags a misconception in it by mistake it scores lower, and is due in minutes.
        score = float(feedback["text"].split(prefix)[1].split("/10")[0])
        due = 1 if rating_for(score) is Rating.Easy else 2
        assert words["due"][due] in summary["text"]
        assert buttons(summary) == ["learn:prog", "learn:rep"]

        # The summary's button: a chart photo (a real PNG) with the totals as its caption.
        telegram.press(user, summary, "learn:prog")
        (photo,) = await telegram.wait_for(lambda s: s.sent(chat, "sendPhoto"))
        with Image.open(io.BytesIO(photo["photo"]["content"])) as image:
            assert image.format == "PNG" and image.size == (1000, 700)
            colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
            assert colours is not None and len(colours) > 50  # drawn, not blank
        caption = parse_html(photo["caption"])
        assert words["progress"] in caption and "Junior: 2/" in caption

        # The failed question is due a minute later: not before, and then first in /review.
        telegram.send_text(user, "/review")
        await wait_text(telegram, chat, words["not_due"])
        clock.advance(minutes=2)
        asked_before = len(question_messages(telegram, chat))
        telegram.send_text(user, "/review")
        await wait_text(telegram, chat, words["started"])
        again = (await telegram.wait_for(lambda s: question_messages(s, chat)[asked_before:]))[0]
        assert find_question(bank, again).id == failed.id

        telegram.send_text(user, "/report")
        report = await wait_text(telegram, chat, words["report"])
        assert "Junior" in report["text"]

        telegram.send_text(user, "/export")
        (document,) = await telegram.wait_for(lambda s: s.sent(chat, "sendDocument"))
        rows = list(
            csv.DictReader(io.StringIO(document["document"]["content"].decode("utf-8-sig")))
        )
        assert {r["question_id"] for r in rows} == {failed.id, second.id}

        # /forget, then /progress has nothing to show again.
        count = len(telegram.bot_messages(chat))
        telegram.send_text(user, "/forget")
        confirm = await wait_text(telegram, chat, "/export", after=count)
        telegram.press(user, confirm, "forget:1")
        await telegram.wait_for(
            lambda s: words["deleted"] in s.messages[(chat, confirm["message_id"])]["text"]
        )
        count = len(telegram.bot_messages(chat))
        telegram.send_text(user, "/progress")
        await wait_text(telegram, chat, words["empty"], after=count)
        assert len(telegram.sent(chat, "sendPhoto")) == 1
    finally:
        await bot.stop()
