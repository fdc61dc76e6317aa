"""Draws docs/progress-chart.png (and -ru): /progress for a made-up user who practised for three
weeks and got better. Deterministic, so the snapshot changes only when the chart code does.

    .venv/bin/python scripts/progress_snapshot.py
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from bot.content.loader import load_bank
from bot.services.history import HistoryRow
from bot.services.progress import summarize
from bot.services.progress_chart import render_progress_chart

ROOT = Path(__file__).resolve().parents[1]
START = datetime(2026, 3, 2, 19, 0, tzinfo=UTC)
DAYS = 21


def rows() -> list[HistoryRow]:
    bank = load_bank(ROOT / "content" / "pytorch")
    rng = random.Random(13)
    questions = [q for q in bank if q.level != "senior"]
    made = []
    for day in range(DAYS):
        for _ in range(rng.randint(1, 4)):
            question = rng.choice(questions)
            skill = 3.0 + 5.0 * day / DAYS  # rises from about 3 to about 8
            score = round(min(10.0, max(0.0, rng.gauss(skill, 1.6))), 1)
            when = START + timedelta(days=day, minutes=rng.randint(0, 180))
            made.append(
                HistoryRow(when, "private", question.id, question.question.en,
                           question.level, score, None, "")
            )  # fmt: skip
    return made


def main() -> None:
    bank = load_bank(ROOT / "content" / "pytorch")
    summary = summarize(rows(), bank, today=date(2026, 3, 22))
    for lang, name in (("en", "progress-chart.png"), ("ru", "progress-chart-ru.png")):
        path = ROOT / "docs" / name
        path.write_bytes(render_progress_chart(summary, lang))
        print(path)


if __name__ == "__main__":
    main()
