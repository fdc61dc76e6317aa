"""Feedback quotes the user's own words behind each covered point and flagged pitfall, escaped."""

from __future__ import annotations

from bot.content.loader import QuestionBank
from bot.services.outbox import FeedbackItem
from bot.telegram.rendering import render_feedback


def test_feedback_quotes_evidence_for_points_and_pitfalls(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    point, pitfall = question.key_points[0], question.pitfalls[0]
    item = FeedbackItem(
        answer_id=1,
        chat_id=1,
        reply_to=None,
        question=question,
        score=6.0,
        verdict="partial",
        covered=[point.id],
        missed=[k.id for k in question.key_points[1:]],
        pitfalls=[pitfall.id],
        evidence={
            point.id: "dropout <b>off</b> & BN uses running stats",
            f"pitfall:{pitfall.id}": "eval() turns off autograd",
        },
    )
    html = "\n".join(part.as_html() for part in render_feedback(item, "en"))
    assert "your words: «dropout &lt;b&gt;off&lt;/b&gt; &amp; BN uses running stats»" in html
    assert "«eval() turns off autograd»" in html
    ru = "\n".join(part.as_html() for part in render_feedback(item, "ru"))
    assert "ваши слова: «eval() turns off autograd»" in ru


def test_a_pitfall_worth_checking_is_offered_not_asserted(bank: QuestionBank) -> None:
    """Below the head's flag threshold the feedback asks the user to check a sentence against a
    documented misconception; it does not say they hold it, and lists it once."""
    question = bank.questions["train-vs-eval"]
    near, other = question.pitfalls[0], question.pitfalls[1]
    item = FeedbackItem(
        answer_id=1,
        chat_id=1,
        reply_to=None,
        question=question,
        score=7.0,
        verdict="good",
        covered=[],
        missed=[k.id for k in question.key_points],
        pitfalls=[],
        evidence={f"check:{near.id}": "eval() <i>freezes</i> the model"},
    )
    for lang, heading, quote in (
        ("en", "Worth checking", "your words: «eval() &lt;i&gt;freezes&lt;/i&gt; the model»"),
        ("ru", "Проверьте себя", "ваши слова: «eval() &lt;i&gt;freezes&lt;/i&gt; the model»"),
    ):
        html = "\n".join(part.as_html() for part in render_feedback(item, lang))
        assert heading in html and quote in html
        assert "Misconceptions in your answer" not in html and "Ошибки в ответе" not in html
        assert html.count(near.claim.get(lang).replace("'", "&#x27;")[:30]) == 1
        assert other.claim.get(lang).replace("'", "&#x27;")[:30] in html  # still documented
