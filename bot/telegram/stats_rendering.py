"""The operators' usage figures as text: `/stats` in Telegram and `python -m bot stats`."""

from __future__ import annotations

from aiogram.utils.formatting import Text

from bot.i18n import t
from bot.services.stats import BotStats


def render_stats(stats: BotStats, lang: str) -> Text:
    average = "—" if stats.average_score_7d is None else f"{stats.average_score_7d}/10"
    lines = [t(lang, "stats", average=average, **stats.as_dict())]
    if stats.hardest:
        lines.append(t(lang, "stats_hardest"))
        lines += [
            t(lang, "stats_hardest_line", id=q.question_id, average=q.average, answers=q.answers)
            for q in stats.hardest
        ]
    return Text("\n".join(lines))
