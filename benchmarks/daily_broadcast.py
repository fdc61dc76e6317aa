"""Benchmark (not a test): N subscribers due in the same minute, one bot process, against the
fake Bot API (in its own process) enforcing Telegram's global 30 messages/s.

Prints the total delivery time against the floor N/30 s, how many subscribers got no question
(lost) or more than one (duplicated), 429s received, and the bot process's peak memory.

    .venv/bin/python benchmarks/daily_broadcast.py                  # 10,000 subscribers (~6 min)
    .venv/bin/python benchmarks/daily_broadcast.py --subscribers 300 --rate 29
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIRST_ID = 10_000_000


def fake_server(conn, subscribers: int, limit: int) -> None:  # type: ignore[no-untyped-def]
    """Child process: the fake Bot API until told to stop; then report what it received."""
    from tests.fake_telegram import Chat, FakeTelegram

    async def main() -> None:
        fake = FakeTelegram(global_rate=limit)
        for uid in range(FIRST_ID, FIRST_ID + subscribers):
            fake.chats[uid] = Chat(uid)
        conn.send(await fake.start())
        await asyncio.to_thread(conn.recv)  # "stop"
        per_chat = Counter(int(p["chat_id"]) for m, p in fake.requests if m == "sendMessage")
        conn.send(
            {
                "per_chat": dict(per_chat),
                "rejected_429": sum(1 for m, _ in fake.requests if m == "sendMessage:429"),
            }
        )
        await fake.stop()

    asyncio.run(main())


async def populate(url: str, subscribers: int, due: datetime) -> None:
    """Users and subscriptions in bulk, all due at the same instant."""
    from sqlalchemy import insert

    from bot.storage.engine import create_engine
    from bot.storage.models import DailySubscription, User

    engine = create_engine(url)
    ids = range(FIRST_ID, FIRST_ID + subscribers)
    async with engine.begin() as conn:
        await conn.execute(
            insert(User),
            [{"id": i, "language": "en", "level": "junior", "created_at": due} for i in ids],
        )
        await conn.execute(
            insert(DailySubscription),
            [
                {
                    "user_id": i,
                    "chat_id": i,
                    "local_time": due.strftime("%H:%M"),
                    "timezone": "UTC",
                    "weekdays_only": False,
                    "active": True,
                    "next_due_at": due,
                    "updated_at": due,
                }
                for i in ids
            ],
        )
    await engine.dispose()


async def broadcast(url: str, api_url: str, rate: float) -> tuple[float, dict[str, int]]:
    """The bot's side, as run_bot wires it: session middlewares, service, scheduler."""
    from bot.app import build_bot
    from bot.config import load_settings
    from bot.content.loader import load_bank
    from bot.services.daily import DailyService
    from bot.storage.engine import create_engine, create_session_factory
    from bot.telegram.daily_scheduler import DailyScheduler

    settings = load_settings(
        bot_token="123456:TEST-TOKEN", telegram_api_url=api_url, database_url=url, send_rate=rate
    )
    bot = build_bot(settings)
    engine = create_engine(url)
    due = datetime.now(UTC).replace(second=0, microsecond=0)
    started = time.monotonic()
    daily = DailyService(
        create_session_factory(engine),
        load_bank(settings.content_dir),
        clock=lambda: due + timedelta(seconds=time.monotonic() - started),
    )
    scheduler = DailyScheduler(bot, daily, tick=1.0, batch=max(1, round(rate)))
    started = time.monotonic()
    while True:  # what the scheduler loop does, until nothing due is left
        await scheduler.run_once()
        counts = await daily.status_counts()
        if not {"pending", "claimed", "sending"} & set(counts):
            break
    elapsed = time.monotonic() - started
    await bot.session.close()
    await engine.dispose()
    return elapsed, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=29.0, help="the bot's SEND_RATE")
    parser.add_argument("--limit", type=int, default=30, help="the fake's global messages/s")
    args = parser.parse_args()

    import logging

    logging.basicConfig(level=logging.WARNING)
    from bot.storage.migrations import upgrade

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=fake_server, args=(child, args.subscribers, args.limit))
    server.start()
    api_url = parent.recv()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        upgrade(url)
        due = datetime.now(UTC).replace(second=0, microsecond=0)
        asyncio.run(populate(url, args.subscribers, due))
        for module in ("bot.app", "bot.telegram.daily_scheduler"):  # imports are not the cost
            importlib.import_module(module)

        before = resource.getrusage(resource.RUSAGE_SELF)
        elapsed, statuses = asyncio.run(broadcast(url, api_url, args.rate))
        after = resource.getrusage(resource.RUSAGE_SELF)
    rss_before, rss_peak = before.ru_maxrss, after.ru_maxrss
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    parent.send("stop")
    report = parent.recv()
    server.join(10)

    per_chat = report["per_chat"]
    lost = sum(1 for i in range(args.subscribers) if per_chat.get(FIRST_ID + i, 0) == 0)
    duplicated = sum(1 for n in per_chat.values() if n > 1)
    floor = args.subscribers / args.limit
    print(f"subscribers          {args.subscribers}")
    print(f"bot send rate        {args.rate:g} msgs/s (fake enforces {args.limit}/s)")
    print(f"total delivery time  {elapsed:.1f} s")
    print(f"floor ({args.limit}/s)        {floor:.1f} s")
    print(f"ratio                {elapsed / floor:.3f}x")
    print(f"lost                 {lost}")
    print(f"duplicated           {duplicated}")
    print(f"429 from the fake    {report['rejected_429']}")
    print(f"delivery rows        {dict(sorted(statuses.items()))}")
    print(f"bot peak RSS         {rss_peak / 1024:.0f} MiB", end=" ")
    print(f"(before sending {rss_before / 1024:.0f} MiB)")
    print(f"bot CPU time         {cpu:.1f} s ({1000 * cpu / args.subscribers:.1f} ms/message)")
    print(f"machine load         {os.getloadavg()[0]:.1f} (1-min average, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
