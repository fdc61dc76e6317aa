"""Benchmark (not a test): `/progress` for a user with 1,000 graded answers.

Seeds a fresh SQLite database (migrated like the bot's) with that user's answers over 60 days
across the bank (private ones plus some group-round ones), a user with 10 answers as the
baseline, and other users' answers around them so that reading one user's rows has something to
skip. Then times, over --runs runs, load_progress (the history queries + summarize), the chart
and the text, printing p50/max in ms, and prints SQLite's EXPLAIN QUERY PLAN of the exact
statements history() sends (captured from the engine), which should search an index on user_id.

    .venv/bin/python benchmarks/progress_1000.py
    .venv/bin/python benchmarks/progress_1000.py --answers 5000 --runs 50
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

USER, BASELINE_USER, FIRST_OTHER = 1, 2, 1000
GROUP = -100
DAYS = 60
TODAY = date(2026, 11, 29)
LAST = datetime(2026, 11, 29, 20, tzinfo=UTC)


async def seed(url: str, answers: int, group_answers: int, others: int, per_other: int) -> None:
    """Bulk inserts: the user under test, the baseline user (10 answers), the other users."""
    from sqlalchemy import insert, select

    from bot.content.loader import load_bank
    from bot.storage.engine import create_engine
    from bot.storage.models import (
        Answer,
        AskedQuestion,
        GroupChat,
        Round,
        RoundAnswer,
        RoundQuestion,
        User,
    )

    rng = random.Random(7)
    ids = [q.id for q in load_bank()]
    span = timedelta(days=DAYS).total_seconds()

    def when() -> datetime:
        return LAST - timedelta(seconds=rng.uniform(0, span))

    engine = create_engine(url)
    users = [USER, BASELINE_USER, *range(FIRST_OTHER, FIRST_OTHER + others)]
    private = [(USER, answers), (BASELINE_USER, 10)] + [(u, per_other) for u in users[2:]]
    async with engine.begin() as conn:
        await conn.execute(insert(User), [{"id": u, "language": "ru"} for u in users])
        await conn.execute(insert(GroupChat), [{"id": GROUP}])
        asked = [
            {"user_id": u, "chat_id": u, "question_id": rng.choice(ids), "status": "answered"}
            for u, n in private
            for _ in range(n)
        ]
        await conn.execute(insert(AskedQuestion), asked)
        rows = (
            await conn.execute(select(AskedQuestion.id, AskedQuestion.user_id,
                                      AskedQuestion.question_id))
        ).all()  # fmt: skip
        await conn.execute(
            insert(Answer),
            [
                {"asked_id": a, "user_id": u, "question_id": q, "text": "ответ " * 40,
                 "language": "ru", "status": "delivered", "score": round(rng.uniform(0, 10), 1),
                 "verdict": "partial", "created_at": when()}
                for a, u, q in rows
            ],
        )  # fmt: skip
        # Group rounds of ten questions; the user and every other user answer each question.
        for r in range(0, group_answers, 10):
            qids = [rng.choice(ids) for _ in range(min(10, group_answers - r))]
            round_id = (
                await conn.execute(
                    insert(Round).returning(Round.id),
                    [{"chat_id": GROUP, "level": "junior", "question_ids": qids, "seconds": 60,
                      "status": "finished"}],
                )
            ).scalar_one()  # fmt: skip
            for pos, qid in enumerate(qids):
                rq_id = (
                    await conn.execute(
                        insert(RoundQuestion).returning(RoundQuestion.id),
                        [{"round_id": round_id, "chat_id": GROUP, "position": pos,
                          "question_id": qid, "status": "done"}],
                    )
                ).scalar_one()  # fmt: skip
                await conn.execute(
                    insert(RoundAnswer),
                    [
                        {"round_question_id": rq_id, "user_id": u, "name": "x", "text": "ответ",
                         "language": "ru", "status": "graded",
                         "score": round(rng.uniform(0, 10), 1), "answered_at": when()}
                        for u in (USER, *users[2:])
                    ],
                )  # fmt: skip
    await engine.dispose()


def pct(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples):7.2f} ms   max {max(samples):7.2f} ms"


async def timed(fn: Callable[[], Awaitable[Any]], runs: int) -> tuple[list[float], Any]:
    samples, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = await fn()
        samples.append(1000 * (time.perf_counter() - started))
    return samples, result


def plans(db: Path, statements: list[tuple[str, Any]]) -> list[tuple[str, list[str]]]:
    conn = sqlite3.connect(db)
    try:
        return [
            (sql, [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)])
            for sql, params in statements
        ]
    finally:
        conn.close()


async def run(args: argparse.Namespace) -> None:
    from sqlalchemy import event

    from bot.content.loader import load_bank
    from bot.services.progress import load_progress
    from bot.services.progress_chart import render_progress_chart
    from bot.storage.engine import create_engine, create_session_factory
    from bot.storage.migrations import upgrade
    from bot.telegram.progress_rendering import render_progress_text

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        url = f"sqlite+aiosqlite:///{db}"
        await asyncio.to_thread(upgrade, url)
        started = time.perf_counter()
        await seed(url, args.answers, args.group_answers, args.others, args.per_other)
        total = args.answers + 10 + args.others * args.per_other
        total_group = args.group_answers * (1 + args.others)
        print(
            f"seeded in {time.perf_counter() - started:.1f} s: {total} private answers and "
            f"{total_group} group answers in all; user {USER}: {args.answers} private + "
            f"{args.group_answers} group over {DAYS} days; baseline user {BASELINE_USER}: 10"
        )
        bank = load_bank()
        engine = create_engine(url)
        sessions = create_session_factory(engine)
        captured: list[tuple[str, Any]] = []

        def capture(_conn: Any, _cursor: Any, sql: str, params: Any, *_: Any) -> None:
            if sql.lstrip().upper().startswith("SELECT"):
                captured.append((sql, params))

        event.listen(engine.sync_engine, "before_cursor_execute", capture)
        summary = await load_progress(sessions, bank, USER, "ru", TODAY)
        event.remove(engine.sync_engine, "before_cursor_execute", capture)

        async def load(user: int) -> Any:
            return await load_progress(sessions, bank, user, "ru", TODAY)

        big, summary = await timed(lambda: load(USER), args.runs)
        small, _ = await timed(lambda: load(BASELINE_USER), args.runs)
        await engine.dispose()

        cold_started = time.perf_counter()
        render_progress_chart(summary, "ru")  # the first draw loads fonts: timed on its own
        cold = 1000 * (time.perf_counter() - cold_started)

        async def chart() -> bytes:
            return render_progress_chart(summary, "ru")

        async def text() -> str:
            return render_progress_text(summary, "ru")

        charts, png = await timed(chart, args.runs)
        texts, caption = await timed(text, args.runs)

        print(
            f"\nuser {USER}: {summary.total_answers} graded answers in the summary, "
            f"streak {summary.streak}, {len(summary.topics)} topics"
        )
        n = summary.total_answers
        print(f"{f'load_progress, {n} answers':30} {pct(big)}")
        print(f"{'load_progress, 10 answers':30} {pct(small)}")
        ratio = statistics.median(big) / statistics.median(small)
        print(f"{f'  p50 ratio, {n} / 10 answers':30} {ratio:.1f}x")
        print(f"{'render_progress_chart':30} {pct(charts)}   (first draw {cold:.0f} ms, "
              f"PNG {len(png) / 1024:.0f} KiB)")  # fmt: skip
        print(f"{'render_progress_text':30} {pct(texts)}   ({len(caption)} chars)")

        print("\nEXPLAIN QUERY PLAN of the history queries:")
        scans = []
        for sql, plan in plans(db, captured):
            print("  " + " ".join(sql.split()))
            for step in plan:
                print(f"    -> {step}")
                if step.startswith("SCAN") and "USING" not in step:
                    scans.append(step)
        print(
            "full table scans: " + ("; ".join(scans) if scans else "none (every table searched "
                                    "through an index)")
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=1000, help="the user's private answers")
    parser.add_argument("--group-answers", type=int, default=100, help="and group-round ones")
    parser.add_argument("--others", type=int, default=50, help="other users")
    parser.add_argument("--per-other", type=int, default=200, help="private answers each")
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
