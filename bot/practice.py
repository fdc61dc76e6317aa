"""`python -m bot practice`: the same interview in the terminal, no Telegram and no token."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path

from bot.config import Settings
from bot.content.schema import Language, Level
from bot.i18n import t
from bot.scoring.service import ScoringService
from bot.services.commands import UsageError, parse_interview_args, parse_review_args
from bot.services.interviews import MAX_COUNT, AnswerOutcome, ReviewNotDue
from bot.services.outbox import FeedbackItem, OutboxItem, QuestionItem, SummaryItem
from bot.services.progress_chart import render_progress_chart
from bot.telegram.learning_rendering import not_due_text, started_text
from bot.telegram.progress_rendering import render_progress_text
from bot.telegram.rendering import render_feedback, render_question, render_summary
from bot.telegram.report_rendering import render_report

PRACTICE_USER = 0  # Telegram ids are positive, so 0 never collides with a real user

# The bot's texts name its Telegram commands; the terminal has these instead.
TERMINAL_COMMANDS = {
    "interview": "python -m bot practice",
    "review": "python -m bot practice --review",
    "progress": "python -m bot progress",
    "report": "python -m bot progress",
}
_COMMAND = re.compile(r"(?<![\w/])/(" + "|".join(TERMINAL_COMMANDS) + r")\b")


def for_terminal(text: str) -> str:
    """The bot's text with each Telegram command replaced by its terminal equivalent."""
    return _COMMAND.sub(lambda m: TERMINAL_COMMANDS[m.group(1)], text)


def _translated(write: Callable[[str], None]) -> Callable[[str], None]:
    return lambda text: write(for_terminal(text))


REPLIES = {
    AnswerOutcome.no_question: "no_question",
    AnswerOutcome.too_short: "too_short",
    AnswerOutcome.busy: "busy",
    AnswerOutcome.already_answered: "already_answered",
    AnswerOutcome.grade_later: "grading_failed",
}


def render_plain(item: OutboxItem, lang: str) -> str:
    """The same layout as in Telegram (bot/telegram/rendering.py), as plain text."""
    if isinstance(item, QuestionItem):
        return "\n" + render_question(item, lang, hint=False).render()[0] + "\n"
    if isinstance(item, FeedbackItem):
        parts = render_feedback(item, lang, expandable=False)
        return "\n\n".join(part.render()[0] for part in parts)
    assert isinstance(item, SummaryItem)
    return "\n" + render_summary(item, lang).render()[0]


async def practice(
    settings: Settings,
    lang: Language,
    level: Level | None,
    count: int | None,
    read: Callable[[], str | None] | None = None,
    write: Callable[[str], None] = print,
    scoring: ScoringService | None = None,
    review: bool = False,
) -> int:
    """`review`: the questions due for spaced repetition (`practice --review`). Tests pass
    `read`/`write` instead of the terminal and their own loaded `scoring`."""
    from bot.app import build_services

    services = await build_services(settings, scoring)
    service = services.interviews
    read = read or (lambda: sys.stdin.readline() or None)
    write = _translated(write)
    try:
        await service.update_user(PRACTICE_USER, language=lang)
        if review:
            due = await service.start_review(PRACTICE_USER, PRACTICE_USER, count)
            if isinstance(due, ReviewNotDue):
                write(not_due_text(due, services.clock(), lang))
                return 0
            write(started_text(due, lang))
        else:
            started = await service.start(PRACTICE_USER, PRACTICE_USER, level, count)
            if started is None:
                write(t(lang, "no_questions", level=level))
                return 1
            write(started_text(started, lang))
        write("(/skip, /stop; Ctrl-D)")
        while True:
            await service.grade_stored()  # an answer whose grading failed: tried again
            items = await service.outbox(PRACTICE_USER)
            for item in items:
                write(render_plain(item, lang))
                await service.mark_sent(item, None)
            if any(isinstance(i, SummaryItem) for i in items):
                return 0
            line = await asyncio.to_thread(read)
            if line is None:
                await service.stop(PRACTICE_USER)
                continue
            line = line.strip()
            if line == "/skip":
                await service.skip(PRACTICE_USER, PRACTICE_USER)
            elif line == "/stop":
                await service.stop(PRACTICE_USER)
            elif line:
                outcome, _ = await service.submit(PRACTICE_USER, PRACTICE_USER, line)
                if outcome in REPLIES:
                    write(t(lang, REPLIES[outcome]))
    finally:
        await services.close()


def parse_practice_args(args: list[str], review: bool = False) -> tuple[Level | None, int | None]:
    """`[junior|middle|senior] [N]`; with --review only `[N]`."""
    try:
        if review:
            return None, parse_review_args(" ".join(args))
        return parse_interview_args(" ".join(args))
    except UsageError:
        key = "review.usage" if review else "interview_usage"
        raise SystemExit(for_terminal(t("en", key, max=MAX_COUNT))) from None


async def show_progress(
    settings: Settings,
    lang: Language,
    out: Path,
    user_id: int = PRACTICE_USER,
    write: Callable[[str], None] = print,
) -> int:
    """`python -m bot progress`: the /progress text and the /report readiness, and the chart
    written to `out`. No model is loaded: only the database and the bank."""
    from bot.app import build_progress
    from bot.content.loader import load_bank
    from bot.storage.engine import create_engine, create_session_factory
    from bot.storage.migrations import upgrade_async
    from bot.storage.models import User

    write = _translated(write)
    bank = load_bank(settings.content_dir)
    await upgrade_async(settings.database_url)
    engine = create_engine(settings.database_url)
    try:
        sessions = create_session_factory(engine)
        # Only what this command reads: no model, so not build_services.
        progress = build_progress(sessions, bank)
        summary = await progress.progress(user_id, lang)
        async with sessions() as session:
            user = await session.get(User, user_id)
        level = user.level if user else Level.junior
        report = await progress.readiness(user_id, lang, level)
    finally:
        await engine.dispose()
    write(render_progress_text(summary, lang))
    if summary.is_empty:
        return 0
    write("\n" + render_report(report, lang).render()[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(await asyncio.to_thread(render_progress_chart, summary, lang))
    write(t(lang, "progress.chart_file", path=str(out.resolve())))
    return 0
