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
