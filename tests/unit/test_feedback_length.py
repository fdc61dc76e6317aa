"""A private feedback message always fits Telegram's 4096 characters: a long one is shortened
step by step (shorter quotes, then no list of other documented pitfalls) instead of being
refused with a 400 and lost; one that fits is rendered exactly as it always was."""

from __future__ import annotations

import pytest

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.services.outbox import FeedbackItem
from bot.telegram.rendering import render_feedback
from bot.telegram.text_limits import TELEGRAM_TEXT_LIMIT, visible_length

QUOTE = ("x < y & z > w " * 20)[:200]  # longer than any quote width, with HTML to escape


def _worst(question: Question, flagged: bool) -> FeedbackItem:
    """Every point covered with a long quote, every pitfall flagged (or offered as worth
    checking, which also quotes), a daily streak: the longest feedback the question allows."""
    evidence = {point.id: QUOTE for point in question.key_points}
    prefix = "pitfall" if flagged else "check"
    evidence |= {f"{prefix}:{pitfall.id}": QUOTE for pitfall in question.pitfalls}
    return FeedbackItem(
        answer_id=1,
        chat_id=1,
        reply_to=None,
        question=question,
        score=10.0,
        verdict="good",
        covered=[point.id for point in question.key_points],
        missed=[],
        pitfalls=[pitfall.id for pitfall in question.pitfalls] if flagged else [],
        evidence=evidence,
        streak=365,
    )


@pytest.mark.parametrize("flagged", [True, False], ids=["flagged", "worth-checking"])
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_worst_case_feedback_fits_for_every_question(
    bank: QuestionBank, lang: str, flagged: bool
) -> None:
    too_long = []
    for question in bank.questions.values():
        parts = render_feedback(_worst(question, flagged), lang)
        lengths = [visible_length(part) for part in parts]
        if max(lengths) > TELEGRAM_TEXT_LIMIT:
            too_long.append((question.id, lengths))
            continue
        # Shortened, never emptied: every point and misconception is still named.
        feedback = parts[0].as_kwargs()["text"]
        for point in question.key_points:
            assert point.text(lang) in feedback
        for pitfall in question.pitfalls:
            assert pitfall.claim.get(lang) in feedback
    assert too_long == []


def test_long_quotes_are_shortened_before_anything_is_dropped(bank: QuestionBank) -> None:
    """The auditor's case: it used to come to 4145+ characters and was refused."""
    question = bank.questions["mixed-precision"]
    feedback, model_answer = render_feedback(_worst(question, flagged=False), "en")
    text = feedback.as_kwargs()["text"]
    assert visible_length(feedback) <= TELEGRAM_TEXT_LIMIT
    assert text.count("your words: «") == len(question.key_points) + len(question.pitfalls)
    assert "Model answer" in model_answer.as_kwargs()["text"]


SYNTHETIC = Question.model_validate(
    {
        "id": "synthetic",
        "level": "junior",
        "topics": ["autograd"],
        "question": {"en": "What does x < y & z mean?", "ru": "Что значит x < y & z?"},
        "answer": {"en": "It compares <b>x</b> & y.", "ru": "Сравнивает <b>x</b> & y."},
        "key_points": [
            {"id": f"k{i}", "en": f"Point {i} <en>", "ru": f"Пункт {i} <ru>"} for i in range(1, 5)
        ],
        "pitfalls": [
            {
                "id": f"p{i}",
                "claim": {"en": f"Claim {i} & co", "ru": f"Утверждение {i}"},
                "correction": {"en": f"Fix {i}", "ru": f"Исправление {i}"},
            }
            for i in range(1, 4)
        ],
        "code": "x = 1  # <tag>\n",
    }
)

_SAID = "I said &lt;b&gt;x&lt;/b&gt; &amp; y " * 7 + "I said &lt;b&gt;x&lt;/b&gt; &amp; y…"
_CODE = '<pre><code language="language-python">x = 1  # &lt;tag&gt;</code></pre>'
# Captured from render_feedback before the length steps were added.
BEFORE = {
    "en": (
        "<b>Score: 6.5/10</b> · partial\n\n<b>Covered:</b>\n✅ Point 1 &lt;en&gt;\n"
        f"    <i>your words: «{_SAID}»</i>\n✅ Point 2 &lt;en&gt;\n\n"
        "<b>Missed:</b>\n❌ Point 3 &lt;en&gt;\n❌ Point 4 &lt;en&gt;\n\n"
        "<b>Misconceptions in your answer:</b>\n⚠️ <i>Claim 1 &amp; co</i> → Fix 1\n"
        "    <i>your words: «a &gt; b»</i>\n\n"
        "<b>Worth checking: part of your answer sounds like a common misconception</b>\n"
        "🔎 <i>Claim 2 &amp; co</i> — Fix 2\n    <i>your words: «c &lt; d»</i>\n\n"
        "<b>Common pitfalls on this question:</b>\n• <i>Claim 3 &amp; co</i> — Fix 3\n\n"
        "🔥 Streak: 3 days in a row\n\n<b>Model answer (tap to expand):</b>\n"
        "<blockquote expandable>It compares &lt;b&gt;x&lt;/b&gt; &amp; y.</blockquote>\n" + _CODE
    ),
    "ru": (
        "<b>Оценка: 6.5/10</b> · частично\n\n<b>Раскрыто:</b>\n✅ Пункт 1 &lt;ru&gt;\n"
        f"    <i>ваши слова: «{_SAID}»</i>\n✅ Пункт 2 &lt;ru&gt;\n\n"
        "<b>Пропущено:</b>\n❌ Пункт 3 &lt;ru&gt;\n❌ Пункт 4 &lt;ru&gt;\n\n"
        "<b>Ошибки в ответе:</b>\n⚠️ <i>Утверждение 1</i> → Исправление 1\n"
        "    <i>ваши слова: «a &gt; b»</i>\n\n"
        "<b>Проверьте себя: ваш ответ похож на распространённую ошибку</b>\n"
        "🔎 <i>Утверждение 2</i> — Исправление 2\n    <i>ваши слова: «c &lt; d»</i>\n\n"
        "<b>Типичные ошибки на этом вопросе:</b>\n• <i>Утверждение 3</i> — Исправление 3\n\n"
        "🔥 Серия: 3 дня подряд\n\n<b>Эталонный ответ (нажмите, чтобы раскрыть):</b>\n"
        "<blockquote expandable>Сравнивает &lt;b&gt;x&lt;/b&gt; &amp; y.</blockquote>\n" + _CODE
    ),
}


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_feedback_that_fits_is_rendered_as_before(lang: str) -> None:
    item = FeedbackItem(
        answer_id=1,
        chat_id=1,
        reply_to=5,
        question=SYNTHETIC,
        score=6.5,
        verdict="partial",
        covered=["k1", "k2"],
        missed=["k3", "k4"],
        pitfalls=["p1"],
        evidence={"k1": "I said <b>x</b> & y " * 12, "pitfall:p1": "a > b", "check:p2": "c < d"},
        streak=3,
    )
    assert [part.as_html() for part in render_feedback(item, lang)] == [BEFORE[lang]]


def test_the_list_of_other_pitfalls_goes_when_shorter_quotes_are_not_enough() -> None:
    long = Question.model_validate(
        {
            "id": "long",
            "level": "senior",
            "topics": ["autograd"],
            "question": {"en": "Q?", "ru": "В?"},
            "answer": {"en": "A.", "ru": "О."},
            "key_points": [
                {"id": f"k{i}", "en": f"{i} " + "point & " * 50, "ru": "пункт"} for i in range(7)
            ],
            "pitfalls": [
                {
                    "id": f"p{i}",
                    "claim": {"en": f"{i} " + "claim " * 25, "ru": "ошибка"},
                    "correction": {"en": "fix < " * 25, "ru": "правка"},
                }
                for i in range(4)
            ],
        }
    )
    item = FeedbackItem(
        answer_id=1,
        chat_id=1,
        reply_to=None,
        question=long,
        score=8.0,
        verdict="good",
        covered=[point.id for point in long.key_points],
        missed=[],
        pitfalls=["p0"],
        evidence={point.id: QUOTE for point in long.key_points} | {"pitfall:p0": QUOTE},
    )
    feedback = render_feedback(item, "en")[0]
    text = feedback.as_kwargs()["text"]
    assert visible_length(feedback) <= TELEGRAM_TEXT_LIMIT
    assert "Common pitfalls on this question" not in text
    assert all(point.text("en") in text for point in long.key_points)
    assert long.pitfalls[0].correction.en in text
