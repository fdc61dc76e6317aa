"""Small texts of starting an interview or a review, and when a review falls due."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from bot.i18n import t
from bot.services.interviews import InterviewStart, ReviewNotDue


def due_in(lang: str, delta: timedelta) -> str:
    """ "in 8 minutes", "через 3 часа", "in 2 days": rounded up, so never "in 0 minutes"."""
    minutes = max(1, math.ceil(delta.total_seconds() / 60))
    if minutes < 90:
        return t(lang, "when.minutes", n=minutes)
    hours = math.ceil(minutes / 60)
    if hours < 36:
        return t(lang, "when.hours", n=hours)
    return t(lang, "when.days", n=max(2, round(hours / 24)))


def not_due_text(due: ReviewNotDue, now: datetime, lang: str) -> str:
    """/review with nothing due: when the next one is, or that there are none yet."""
    if due.next_due is None:
        return t(lang, "review.none_yet")
    return t(lang, "review.not_due", when=due_in(lang, due.next_due - now))


def started_text(started: InterviewStart, lang: str) -> str:
    """The reply to /interview, /review or the "start an interview" button."""
    if started.review:
        lines = [t(lang, "review.started", count=started.count)]
    else:
        lines = [t(lang, "interview_started", count=started.count, level=started.level)]
    if started.replaced:
        lines.insert(0, t(lang, "interview_replaced"))
    return "\n".join(lines)
