"""`/progress`'s text: levels, weakest topics, streak and latest answers, short enough to be the
chart's photo caption. Plain text: the caller escapes it."""

from __future__ import annotations

from bot.i18n import t, topic_name
from bot.services.progress import ProgressSummary
from bot.services.text_clip import clip
from bot.telegram.text_limits import utf16_len

# Telegram's caption limit is 1024 UTF-16 units; some room is left for the caller.
CAPTION_LIMIT = 1000
WEAKEST_SHOWN = 3
QUESTION_CHARS = 60
TOPIC_CHARS = 40


def render_progress_text(summary: ProgressSummary, lang: str) -> str:
    if summary.is_empty:
        return t(lang, "progress.empty")
    head = [t(lang, "progress.title", count=summary.total_answers), t(lang, "progress.levels")]
    head += [
        t(lang, "progress.level_line", level=p.level.capitalize(), answered=p.answered,
          total=p.total)
        for p in summary.levels
        if p.total
    ]  # fmt: skip
    if summary.streak:
        head.append(t(lang, "progress.streak", days=summary.streak))
    else:
        head.append(t(lang, "progress.no_streak"))
    topics = [
        t(lang, "progress.topic_line", topic=clip(topic_name(lang, p.topic), TOPIC_CHARS),
          mastery=f"{p.mastery:.1f}", answered=p.answered, total=p.total)
        for p in summary.topics[:WEAKEST_SHOWN]
    ]  # fmt: skip
    recent = [
        t(lang, "progress.recent_line", score=f"{r.score:.1f}",
          question=clip(r.question, QUESTION_CHARS))
        for r in summary.recent
    ]  # fmt: skip
    # Over the limit, the oldest of the latest answers go first, then the less weak topics; the
    # head (a few short lines of fixed shape) always fits.
    text = _join(lang, head, topics, recent)
    while utf16_len(text) > CAPTION_LIMIT and (recent or topics):
        (recent or topics).pop()
        text = _join(lang, head, topics, recent)
    return text


def _join(lang: str, head: list[str], topics: list[str], recent: list[str]) -> str:
    blocks = ["\n".join(head)]
    if topics:
        blocks.append("\n".join([t(lang, "progress.weakest"), *topics]))
    if recent:
        blocks.append("\n".join([t(lang, "progress.recent"), *recent]))
    return "\n\n".join(blocks)
