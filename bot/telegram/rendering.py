"""Outbox items as Telegram HTML, built with aiogram's formatting nodes (they escape user text)."""

from __future__ import annotations

from aiogram.utils.formatting import (
    Bold,
    ExpandableBlockQuote,
    Italic,
    Pre,
    Text,
    as_line,
    as_list,
)

from bot.i18n import TEXTS, t, topic_name
from bot.services.outbox import FeedbackItem, PreviousAttempt, QuestionItem, SummaryItem
from bot.services.text_clip import clip
from bot.telegram.report_rendering import render_readiness_line
from bot.telegram.text_limits import TELEGRAM_TEXT_LIMIT, visible_length

QUOTE_LIMIT = 160
THEN_NOW_LIMIT = 90  # a key point or claim in "then and now"
# A feedback message longer than Telegram's limit would be refused, so the feedback is rebuilt
# with less until it fits: (quote width, 0 = no quotes; whether untouched documented pitfalls
# are listed). The user's own words go shorter before the list of other pitfalls goes, and the
# verdict on each point and misconception is never dropped.
FEEDBACK_STEPS: tuple[tuple[int, bool], ...] = (
    (QUOTE_LIMIT, True),
    (100, True),
    (60, True),
    (60, False),
    (40, False),
    (0, False),
)


def render_question(item: QuestionItem, lang: str, hint: bool = True) -> Text:
    """`hint`: how to answer in Telegram (message or reply); the terminal has its own."""
    level = item.question.level.value
    if item.total:
        header = t(lang, "question_header", position=item.position, total=item.total, level=level)
    else:
        header = t(lang, "question_header_single", level=level)
    lines: list[Text | str] = [Bold(header), item.question.question.get(lang)]
    if hint:
        lines.append(Italic(t(lang, "answer_hint")))
    return as_list(*lines)


def render_feedback(item: FeedbackItem, lang: str, expandable: bool = True) -> list[Text]:
    """The feedback message, and the model answer separately if both do not fit in one.
    `expandable`: the model answer folds (Telegram); the terminal prints it in full."""
    question = item.question
    answer = question.answer.get(lang).strip()
    model: list[Text | str] = (
        [Bold(t(lang, "model_answer")), ExpandableBlockQuote(answer)]
        if expandable
        else [Bold(t(lang, "model_answer_plain")), answer]
    )
    if question.code:
        model.append(Pre(question.code.strip(), language="python"))
    model_answer = as_list(*model)
    # Splitting the model answer off costs less than trimming the feedback: one message only at
    # full detail; otherwise the feedback alone is shortened step by step until it fits.
    full = _feedback(item, lang, *FEEDBACK_STEPS[0])
    combined = as_list(full, model_answer, sep="\n\n")
    if visible_length(combined) <= TELEGRAM_TEXT_LIMIT:
        return [combined]
    for step in FEEDBACK_STEPS:
        feedback = _feedback(item, lang, *step)
        if visible_length(feedback) <= TELEGRAM_TEXT_LIMIT:
            break
    return [feedback, model_answer]


def _then_and_now(item: FeedbackItem, previous: PreviousAttempt, lang: str) -> Text:
    """The question came back: the score then and now, the key points covered now and not
    then, the misconceptions gone and those still there."""
    question = item.question
    points = {k.id for k in question.key_points}
    pitfalls = {p.id for p in question.pitfalls}  # a point or pitfall since removed is skipped
    when = f" ({previous.graded_at.date().isoformat()})" if previous.graded_at else ""
    lines: list[Text | str] = [
        t(lang, "then_now", when=when, then=_fmt(previous.score), now=_fmt(item.score))
    ]
    new = [p for p in item.covered if p not in previous.covered and p in points]
    if new:
        lines.append(t(lang, "then_now.new_points"))
        lines += [f"• {clip(question.key_point(p).text(lang), THEN_NOW_LIMIT)}" for p in new]
    for key, ids in (
        ("then_now.gone", [p for p in previous.pitfalls if p not in item.pitfalls]),
        ("then_now.still", [p for p in previous.pitfalls if p in item.pitfalls]),
    ):
        claims = [question.pitfall(p).claim.get(lang) for p in ids if p in pitfalls]
        if claims:
            lines.append(t(lang, key))
            lines += [as_line("• ", Italic(clip(c, THEN_NOW_LIMIT)), end="") for c in claims]
    return as_list(*lines)


def _your_words(lang: str, quote: str, width: int) -> Text:
    return Italic(f"{t(lang, 'your_words')}: «{clip(quote, width)}»")


def _feedback(item: FeedbackItem, lang: str, width: int, documented_list: bool) -> Text:
    """The feedback at one step of FEEDBACK_STEPS: quotes clipped to `width` (0: left out), and
    the documented pitfalls the answer did not touch listed or not."""
    question = item.question
    key = f"verdict.{item.verdict}"
    verdict = t(lang, key) if key in TEXTS else item.verdict
    parts: list[Text | str] = [
        as_line(Bold(t(lang, "score", score=_fmt(item.score))), " · ", verdict, end="")
    ]
    if item.answered_instead is not None:
        other = item.answered_instead.question.get(lang)
        parts.append(t(lang, "another_question", question=clip(other, QUOTE_LIMIT)))
    if item.previous is not None:
        parts.append(_then_and_now(item, item.previous, lang))
    covered_lines: list[Text] = []
    for point_id in item.covered:
        point = question.key_point(point_id)
        line = as_line("✅ ", point.text(lang), end="")
        quote = item.evidence.get(point_id)
        if quote and width:
            line = as_line(line, "\n    ", _your_words(lang, quote, width), end="")
        covered_lines.append(line)
    if covered_lines:
        parts.append(as_list(Bold(t(lang, "covered")), *covered_lines))
    missed = [as_line("❌ ", question.key_point(pid).text(lang), end="") for pid in item.missed]
    if missed:
        parts.append(as_list(Bold(t(lang, "missed")), *missed))
    fell = []
    for pitfall_id in item.pitfalls:
        pitfall = question.pitfall(pitfall_id)
        line = as_line(
            "⚠️ ", Italic(pitfall.claim.get(lang)), " → ", pitfall.correction.get(lang), end=""
        )
        quote = item.evidence.get(f"pitfall:{pitfall_id}")
        if quote and width:
            line = as_line(line, "\n    ", _your_words(lang, quote, width), end="")
        fell.append(line)
    if fell:
        parts.append(as_list(Bold(t(lang, "fell_into")), *fell))
    # Close to a documented misconception but not enough to say the user holds it: shown
    # first among the documented ones, with the sentence, as a question to check, not a verdict.
    checks = [
        p
        for p in question.pitfalls
        if p.id not in item.pitfalls and f"check:{p.id}" in item.evidence
    ]
    if checks:
        lines = []
        for p in checks:
            line = as_line("🔎 ", Italic(p.claim.get(lang)), " — ", p.correction.get(lang), end="")
            if width:
                quote = item.evidence[f"check:{p.id}"]
                line = as_line(line, "\n    ", _your_words(lang, quote, width), end="")
            lines.append(line)
        parts.append(as_list(Bold(t(lang, "worth_checking")), *lines))
    documented = [
        as_line("• ", Italic(p.claim.get(lang)), " — ", p.correction.get(lang), end="")
        for p in question.pitfalls
        if p.id not in item.pitfalls and p not in checks
    ]
    if documented and documented_list:
        parts.append(as_list(Bold(t(lang, "documented_pitfalls")), *documented))
    if item.streak:
        parts.append(t(lang, "daily_streak", streak=item.streak))
    return as_list(*parts, sep="\n\n")


def render_summary(item: SummaryItem, lang: str) -> Text:
    lines: list[Text | str] = [Bold(t(lang, "summary_title"))]
    if item.average is None:
        lines.append(t(lang, "summary_no_answers"))
    else:
        lines.append(t(lang, "summary_average", score=_fmt(item.average)))
    lines.append(
        t(lang, "summary_counts", answered=item.answered, total=item.total, skipped=item.skipped)
    )
    if item.average is not None:
        if item.weakest_topics:
            topics = ", ".join(topic_name(lang, topic) for topic in item.weakest_topics)
            lines.append(t(lang, "summary_weakest", topics=topics))
        else:
            lines.append(t(lang, "summary_strong"))
    if item.readiness is not None and item.readiness.answered:
        lines.append(render_readiness_line(item.readiness, lang))
    if item.reviews_due_soon:
        lines.append(t(lang, "summary_reviews_due", count=item.reviews_due_soon))
    lines.append(t(lang, "summary_next"))
    return as_list(*lines)


def _fmt(score: float) -> str:
    """7.0 -> "7", 6.5 -> "6.5": the N/10 a person reads."""
    return f"{score:.1f}".rstrip("0").rstrip(".")
