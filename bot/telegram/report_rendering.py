"""The readiness report (`/report`) and its one-line verdict, built with aiogram's formatting
nodes (they escape topic and question texts)."""

from __future__ import annotations

import math

from aiogram.utils.formatting import Bold, Italic, Text, as_line, as_list

from bot.content.schema import Level
from bot.i18n import t, topic_name
from bot.services.readiness import (
    LEVELS,
    PracticeItem,
    ReadinessReport,
    Standing,
    TopicReadiness,
)
from bot.services.text_clip import clip
from bot.telegram.text_limits import TELEGRAM_TEXT_LIMIT, visible_length

# Question texts are clipped so that the full bank (22 topics, 3 questions with up to 5
# follow-ups each) fits in one message; shorter clips are the fallback if it still does not.
CLIPS = (90, 60, 40)


def level_name(level: Level) -> str:
    return level.value.capitalize()  # "Middle": the way the levels are named in both languages


def _score(score: float) -> str:
    """Rounded down to one decimal, so that a score under the bar never reads 7/10."""
    floored = math.floor(score * 10 + 1e-6) / 10
    return f"{floored:.1f}".rstrip("0").rstrip(".")


def _rank(level: Level | None) -> int:
    return LEVELS.index(level) if level is not None else -1


def _ready_line(topic: TopicReadiness, lang: str) -> Text:
    assert topic.level is not None
    line = t(
        lang, "report.ready", topic=topic_name(lang, topic.topic), level=level_name(topic.level)
    )
    above = [lr for lr in topic.levels if _rank(lr.level) > _rank(topic.level)]
    if above:  # how far the next level is
        nxt = above[0]
        line += t(lang, "report.next_level", level=level_name(nxt.level), score=_score(nxt.score))
    return as_line("✅ ", line, end="")


def _below_line(topic: TopicReadiness, lang: str) -> Text:
    assert topic.level is not None
    missed = topic.at(topic.level)
    score = _score(missed.score if missed else 0.0)
    name = topic_name(lang, topic.topic)
    text = t(lang, "report.below", topic=name, level=level_name(topic.level), score=score)
    return as_line("❌ ", text, end="")


def _topics_section(report: ReadinessReport, lang: str) -> Text:
    def by_name(topic: TopicReadiness) -> str:
        return topic_name(lang, topic.topic).casefold()

    ready = sorted(
        report.with_status(Standing.ready), key=lambda tr: (-_rank(tr.level), by_name(tr))
    )
    below = sorted(
        report.with_status(Standing.below), key=lambda tr: (_rank(tr.level), by_name(tr))
    )
    untried = sorted(report.with_status(Standing.untried), key=by_name)
    lines: list[Text | str] = [_ready_line(tr, lang) for tr in ready]
    lines += [_below_line(tr, lang) for tr in below]
    if untried:
        names = ", ".join(topic_name(lang, tr.topic) for tr in untried)
        lines.append(as_line("⏳ ", t(lang, "report.untried", topics=names), end=""))
    return as_list(*lines)


def _practice_item(position: int, item: PracticeItem, lang: str, width: int) -> Text:
    question = item.question
    level = level_name(question.level)
    if item.score is None:
        meta = t(lang, "report.unanswered", level=level)
    else:
        meta = t(lang, "report.last_score", level=level, score=_score(item.score))
    lines: list[Text | str] = [
        as_line(f"{position}. ", clip(question.question.get(lang), width), end=""),
        as_line("    ", Italic(meta), end=""),
    ]
    lines += [as_line("    ↳ ", clip(f.question.get(lang), width), end="") for f in item.follow_ups]
    return as_list(*lines)


def _practice_section(report: ReadinessReport, lang: str, width: int) -> Text:
    if not report.practice:
        return Text(t(lang, "report.practice_none"))
    items = [_practice_item(n, item, lang, width) for n, item in enumerate(report.practice, 1)]
    return as_list(Bold(t(lang, "report.practice")), *items)


def _render(report: ReadinessReport, lang: str, width: int) -> Text:
    head = as_list(
        Bold(t(lang, "report.title")),
        t(
            lang,
            "report.counts",
            answered=report.answered,
            total=report.total,
            level=level_name(report.user_level),
        ),
    )
    tried = any(tr.status != Standing.untried for tr in report.topics)
    topics = _topics_section(report, lang) if tried else Text(t(lang, "report.empty"))
    return as_list(
        head,
        topics,
        _practice_section(report, lang, width),
        Italic(t(lang, "report.how")),
        sep="\n\n",
    )


def render_report(report: ReadinessReport, lang: str) -> Text:
    for width in CLIPS:
        text = _render(report, lang, width)
        if visible_length(text) <= TELEGRAM_TEXT_LIMIT:
            break
    return text


def render_readiness_line(report: ReadinessReport, lang: str) -> str:
    """One line for the end of an interview: "Readiness: 3 topics ready for Middle, 2 topics
    below the Junior bar. Details: /report". Plain text: the caller's renderer escapes it."""
    parts = []
    for status, key, levels in (
        (Standing.ready, "report.line_ready", LEVELS[::-1]),  # the highest level first
        (Standing.below, "report.line_below", LEVELS),
    ):
        topics = report.with_status(status)
        for level in levels:
            count = sum(1 for tr in topics if tr.level == level)
            if count:
                parts.append(t(lang, key, count=count, level=level_name(level)))
    if not parts:
        return t(lang, "report.line_none")
    return t(lang, "report.line", parts=", ".join(parts))
