"""Two bot processes share one database: every due delivery is claimed and sent by exactly one.

Runs on SQLite and on the local PostgreSQL (skipped with the reason when it is not reachable).
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime, time
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.services.daily import DailyService
from bot.services.interviews import InterviewService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import AskedQuestion, DailyDelivery
from tests.fake_telegram import WAIT

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
DUE = datetime(2026, 6, 10, 9, 0, tzinfo=UTC)
SUBSCRIBERS = 240

WORKER = """
import asyncio, json, sys, time
from datetime import datetime
from bot.content.loader import load_bank
from bot.services.daily import DailyService
from bot.storage.engine import create_engine, create_session_factory

async def main(url, now, expected):
    engine = create_engine(url)
    daily = DailyService(create_session_factory(engine), load_bank(), clock=lambda: now)
    await daily.status_counts()  # connected and ready
    print("ready", flush=True)
    sys.stdin.readline()  # both start together, however long each took to get here
    claimed = []
    while True:
        await daily.materialize()
        jobs = await daily.claim(5)
        assert len(jobs) <= 5, len(jobs)  # never more than asked for
        if not jobs:
            counts = await daily.status_counts()
            if sum(counts.values()) >= expected and not {"pending", "claimed"} & set(counts):
                break
            await asyncio.sleep(0.01)  # the other process still holds rows
        for job in jobs:
            if await daily.start_sending(job):
                await daily.mark_sent(job, 100000 + job.delivery_id)
                claimed.append(job.delivery_id)
    await engine.dispose()
    print(json.dumps(claimed))

asyncio.run(main(sys.argv[1], datetime.fromisoformat(sys.argv[2]), int(sys.argv[3])))
"""


async def test_two_processes_claim_each_delivery_once(shared_db: str, bank: QuestionBank) -> None:
    engine = create_engine(shared_db)
    sessions = create_session_factory(engine)
    interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
    daily = DailyService(sessions, bank, clock=lambda: DUE.replace(hour=8))
    for uid in range(1, SUBSCRIBERS + 1):
        await interviews.ensure_user(uid, "en")
        await daily.subscribe(uid, uid, time(9, 0), "UTC" if uid % 2 else "+0")

    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", WORKER, shared_db, DUE.isoformat(), str(SUBSCRIBERS),
            cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]  # fmt: skip
    for worker in workers:  # a barrier: both are up, then they race
        assert worker.stdout is not None
        line = await asyncio.wait_for(worker.stdout.readline(), WAIT)
        assert line == b"ready\n", line + (await worker.communicate())[1][-2000:]
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write(b"go\n")
    await asyncio.gather(*(worker.stdin.drain() for worker in workers if worker.stdin))
    outputs = [await asyncio.wait_for(w.communicate(), WAIT) for w in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err.decode()[-2000:]
    first, second = (set(json.loads(out.decode().strip().splitlines()[-1])) for out, _ in outputs)

    async with sessions() as session:
        rows = (await session.scalars(select(DailyDelivery))).all()
        asks = (await session.scalars(select(AskedQuestion))).all()
    await engine.dispose()
    assert len(rows) == SUBSCRIBERS  # one row per user and day, though both processes created
    assert not first & second  # no delivery claimed by both
    assert first | second == {r.id for r in rows}
    assert first and second  # both really took part
    assert {r.status for r in rows} == {"sent"}
    assert len(asks) == SUBSCRIBERS and len({a.message_id for a in asks}) == SUBSCRIBERS
