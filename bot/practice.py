"""`python -m bot practice`: the same interview in the terminal, no Telegram and no token."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from bot.config import Settings
from bot.i18n import t
from bot.services.commands import UsageError, parse_interview_args
from bot.services.interviews import MAX_COUNT, Outcome
from bot.services.outbox import FeedbackItem, OutboxItem, QuestionItem, SummaryItem

PRACTICE_USER = 0  # Telegram ids are positive, so 0 never collides with a real user

REPLIES = {
    Outcome.no_question: "no_question",
    Outcome.too_short: "too_short",
    Outcome.busy: "busy",
    Outcome.already_answered: "already_answered",
}


def render_plain(item: OutboxItem, lang: str) -> str:
    if isinstance(item, QuestionItem):
        header = t(
            lang,
            "question_header",
            position=item.position,
            total=item.total or 1,
            level=item.question.level.value,
        )
        return f"\n== {header} ==\n{item.question.question.get(lang)}\n"
    if isinstance(item, FeedbackItem):
        q = item.question
        key = f"verdict.{item.verdict}"
        lines = [f"{t(lang, 'score', score=f'{item.score:g}')} · {t(lang, key)}"]
        if item.covered:
            lines.append(t(lang, "covered"))
            for pid in item.covered:
                lines.append(f"  ✅ {q.key_point(pid).text(lang)}")
                if pid in item.evidence:
                    lines.append(f"     {t(lang, 'your_words')}: «{item.evidence[pid][:160]}»")
        if item.missed:
            lines.append(t(lang, "missed"))
            lines.extend(f"  ❌ {q.key_point(pid).text(lang)}" for pid in item.missed)
        if item.pitfalls:
            lines.append(t(lang, "fell_into"))
            for pid in item.pitfalls:
                p = q.pitfall(pid)
                lines.append(f"  ⚠️ {p.claim.get(lang)} → {p.correction.get(lang)}")
        others = [p for p in q.pitfalls if p.id not in item.pitfalls]
        if others:
            lines.append(t(lang, "documented_pitfalls"))
            lines.extend(f"  • {p.claim.get(lang)} — {p.correction.get(lang)}" for p in others)
        lines.append(t(lang, "model_answer"))
        lines.append(q.answer.get(lang).strip())
        return "\n".join(lines)
    assert isinstance(item, SummaryItem)
    lines = [f"\n== {t(lang, 'summary_title')} =="]
    if item.average is None:
        lines.append(t(lang, "summary_no_answers"))
    else:
        lines.append(t(lang, "summary_average", score=f"{item.average:g}"))
    lines.append(
        t(lang, "summary_counts", answered=item.answered, total=item.total, skipped=item.skipped)
    )
    if item.weakest_topics:
        lines.append(t(lang, "summary_weakest", topics=", ".join(item.weakest_topics)))
    return "\n".join(lines)


async def practice(
    settings: Settings,
    lang: str,
    level: str | None,
    count: int | None,
    read: Callable[[], str | None] | None = None,
    write: Callable[[str], None] = print,
) -> int:
    from bot.app import build_services

    services = await build_services(settings)
    service = services.interviews
    read = read or (lambda: sys.stdin.readline() or None)
    try:
        await service.update_user(PRACTICE_USER, language=lang)
        started = await service.start(PRACTICE_USER, PRACTICE_USER, level, count)
        if started is None:
            write(t(lang, "no_questions", level=level))
            return 1
        write(t(lang, "interview_started", count=started.count, level=started.level))
        write("(/skip, /stop; Ctrl-D)")
        while True:
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


def parse_practice_args(args: list[str]) -> tuple[str | None, int | None]:
    try:
        return parse_interview_args(" ".join(args))
    except UsageError:
        raise SystemExit(t("en", "interview_usage", max=MAX_COUNT)) from None
