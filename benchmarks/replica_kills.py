"""Benchmark (not a test): webhook replicas on PostgreSQL and Redis, killed with SIGKILL under
load and restarted, through the real path.

`--replicas` `python -m bot run` processes in webhook mode share one database (a fresh
PostgreSQL database per run), Redis and one `python -m bot embed-server`. The fake Bot API posts
each update to the replicas in turn and, like a load balancer, sends a failed post to the next
one. Once every replica's /readyz says ready, one person answers a question (the first feedback
after ready); then `--users` people arrive over `--arrive` seconds, each takes
`/interview junior --questions` and answers every question after a think time uniform in
[0, --think] s, with a labelled answer from content/eval or content/heldout. `--kills` times,
spread over the arrivals, a replica (each in turn) is killed with SIGKILL and started again
`--down` s later.

Prints, per run and over all runs: answer -> feedback p50/p95/max (the kills included), the
first feedback after every replica was ready, lost answers, duplicated messages (the same
message reaching a person twice), updates taken over from a dead replica. Exits 1 if an answer
was lost, 2 if a run did not finish.

    .venv/bin/python benchmarks/replica_kills.py --runs 3
    .venv/bin/python benchmarks/replica_kills.py --users 120 --arrive 90 --kills 4
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from concurrent_users import (  # noqa: E402  (after the path is set)
    FIRST_ID,
    PREFIXES,
    WARMUP_ID,
    Users,
    cpu_name,
    free_port,
    percentile,
    row,
)

SECRET = "bench-secret"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TAKEOVER_LINE = "left unfinished by a stopped replica"


async def pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_ADMIN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def wait_http(url: str, process: asyncio.subprocess.Process, limit: float) -> float:
    """Seconds until `url` answers 200; raises if the process exits or `limit` passes."""
    import aiohttp

    began = time.monotonic()
    async with aiohttp.ClientSession() as client:
        while time.monotonic() - began < limit:
            if process.returncode is not None:
                raise RuntimeError(f"{url}: the process exited with {process.returncode}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with client.get(url) as reply:
                    if reply.status == 200:
                        return time.monotonic() - began
            await asyncio.sleep(0.1)
    raise TimeoutError(f"{url} not ready in {limit:.0f} s")


class Replicas:
    """The bot processes, each on its own port; killed and started again by index."""

    def __init__(self, env: dict[str, str], ports: list[int], logs: Path) -> None:
        self.env, self.ports, self.logs = env, ports, logs
        self.processes: list[asyncio.subprocess.Process | None] = [None] * len(ports)
        self.starts = Counter[int]()

    async def start(self, index: int) -> asyncio.subprocess.Process:
        self.starts[index] += 1
        log = self.logs / f"r{index}-{self.starts[index]}.log"
        env = {**self.env, "WEBHOOK_PORT": str(self.ports[index])}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run",
            cwd=ROOT, env=env, stdout=log.open("ab"), stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        self.processes[index] = process
        return process

    async def ready(self, index: int, limit: float = 300.0) -> float:
        process = self.processes[index]
        assert process is not None
        url = f"http://127.0.0.1:{self.ports[index]}/readyz"
        return await wait_http(url, process, limit)

    async def kill(self, index: int) -> None:
        process = self.processes[index]
        if process is not None and process.returncode is None:
            process.send_signal(signal.SIGKILL)
            await process.wait()

    async def stop_all(self) -> None:
        for process in self.processes:
            if process is not None and process.returncode is None:
                process.terminate()
        for process in self.processes:
            if process is not None:
                try:
                    await asyncio.wait_for(process.wait(), 20)
                except TimeoutError:
                    process.kill()
                    await process.wait()

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.logs.glob("r*.log")))


async def one_run(
    args: argparse.Namespace, run: int, samples: list[Any], cache: Path
) -> dict[str, Any]:
    from redis.asyncio import Redis

    from bot.content.loader import load_bank
    from tests.fake_telegram import FakeTelegram

    db = f"bench_kills_{uuid.uuid4().hex[:8]}"
    await pg_admin(f'CREATE DATABASE "{db}"')
    redis = Redis.from_url(args.redis_url)
    await redis.flushdb()  # the shared send bucket and 429 pause of an earlier run
    await redis.aclose()
    fake = FakeTelegram(global_rate=args.limit or None)
    ports = [free_port() for _ in range(args.replicas)]
    fake.webhook_targets = [f"http://127.0.0.1:{p}/telegram/hook" for p in ports]
    users = Users(fake, "en", load_bank(), samples)
    await fake.start()
    tmp = Path(tempfile.mkdtemp(prefix="replica-kills-"))
    base = {
        **os.environ,
        "BOT_TOKEN": fake.token,
        "TELEGRAM_API_URL": fake.url,
        "DATABASE_URL": f"postgresql+asyncpg://postgres@127.0.0.1:5432/{db}",
        "REDIS_URL": args.redis_url,
        "EMBEDDING_CACHE_DIR": str(cache),
        "HF_HUB_OFFLINE": "1",
        "LOG_LEVEL": "INFO",
        "BOT_MODE": "webhook",
        "WEBHOOK_URL": "https://bench.invalid/telegram/hook",
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_HOST": "127.0.0.1",
    }
    embed_port = free_port()
    embedder = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "embed-server", "--port", str(embed_port),
        cwd=ROOT, env=base, stdout=(tmp / "embed.log").open("ab"),
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    base["EMBEDDINGS_URL"] = f"http://127.0.0.1:{embed_port}"
    replicas = Replicas(base, ports, tmp)
    report: dict[str, Any] = {"run": run, "kills": 0, "stopped": None}
    try:
        await wait_http(f"{base['EMBEDDINGS_URL']}/health", embedder, 300)
        began = time.monotonic()
        for index in range(args.replicas):
            await replicas.start(index)
        await asyncio.gather(*(replicas.ready(i) for i in range(args.replicas)))
        report["ready_s"] = time.monotonic() - began
        ready_at = time.monotonic()
        await users.interview(WARMUP_ID, 1, 0.0, random.Random(run))
        scored = PREFIXES["en"][1]
        feedback = next(s.at for s in users.inbox[WARMUP_ID] if s.html.startswith(scored))
        report["first_feedback_s"] = feedback - ready_at
        rng = random.Random(args.seed + run)

        async def person(i: int) -> None:
            await asyncio.sleep(rng.uniform(0, args.arrive))
            await users.interview(FIRST_ID + i, args.questions, args.think, random.Random(i))

        async def killer() -> None:
            start = time.monotonic()
            for k in range(args.kills):
                at = args.arrive * (k + 1) / (args.kills + 1)
                await asyncio.sleep(max(0.0, start + at - time.monotonic()))
                victim = k % args.replicas
                await replicas.kill(victim)
                report["kills"] += 1
                await asyncio.sleep(args.down)
                await replicas.start(victim)

        people = asyncio.gather(*(person(i) for i in range(args.users)))
        try:
            await asyncio.wait_for(asyncio.gather(people, killer()), args.timeout)
        except TimeoutError:
            report["stopped"] = f"not finished in {args.timeout:.0f} s"
        await asyncio.sleep(3.0)  # a late duplicate would arrive now
    finally:
        await replicas.stop_all()
        embedder.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(embedder.wait(), 20)
        await fake.stop()
        with contextlib.suppress(Exception):
            await pg_admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    logs = replicas.log_text()
    records = users.records
    report.update(
        latencies=[r.feedback_at - r.sent_at for r in records if r.feedback_at],
        answered=len(records),
        lost=sum(1 for r in records if r.feedback_at is None),
        duplicated=sum(len(copies) - 1 for copies in duplicates(users)),
        copies=[
            f"{copies[0].text[:30]!r} again {copies[-1].at - copies[0].at:.1f} s later"
            for copies in duplicates(users)
        ],
        takeovers=logs.count(TAKEOVER_LINE),
        tracebacks=logs.count("Traceback"),
        rejected_429=sum(1 for m, _ in fake.requests if m == "sendMessage:429"),
    )
    return report


def duplicates(users: Users) -> list[list[Any]]:
    """Each message that reached one person more than once: its copies, in arrival order."""
    found = []
    for messages in users.inbox.values():
        by_text: dict[str, list[Any]] = {}
        for message in messages:
            by_text.setdefault(message.html, []).append(message)
        found += [copies for copies in by_text.values() if len(copies) > 1]
    return found


def print_run(r: dict[str, Any]) -> None:
    lat = r["latencies"]
    row(f"run {r['run']}", f"{r['kills']} kills; replicas ready after {r.get('ready_s', 0):.1f} s")
    row("  first feedback", f"{r.get('first_feedback_s', float('nan')):.2f} s after all ready")
    if lat:
        row("  answer -> feedback", f"p50 {percentile(lat, 50):.2f} s, p95 "
            f"{percentile(lat, 95):.2f} s, max {max(lat):.2f} s over {len(lat)}")  # fmt: skip
    row("  lost / duplicated", f"{r['lost']} of {r['answered']} / {r['duplicated']} messages")
    for copy in r["copies"]:
        row("    duplicate", copy)
    row("  takeovers", f"{r['takeovers']} log lines; tracebacks {r['tracebacks']}; "
        f"429s {r['rejected_429']}")  # fmt: skip
    if r["stopped"]:
        row("  incomplete", r["stopped"])


async def main_async(args: argparse.Namespace) -> int:
    from bot.evaluation.datasets import load_bank_eval

    samples = [
        s
        for folder in ("eval", "heldout")
        for s in load_bank_eval(ROOT / "content" / folder).samples
    ]
    row("machine", f"{os.cpu_count()} CPUs, {cpu_name()}")
    row("load", f"{args.replicas} replicas + embed-server, {args.users} people × "
        f"{args.questions} over {args.arrive:g} s, think 0–{args.think:g} s, "
        f"{args.kills} kills a run, down {args.down:g} s")  # fmt: skip
    # One cache for every run: the first starts cold (unless --cache-dir has the vectors).
    cache = Path(args.cache_dir or tempfile.mkdtemp(prefix="replica-kills-cache-")).resolve()
    reports = []
    for run in range(args.runs):
        reports.append(await one_run(args, run, samples, cache))
        print_run(reports[-1])
    lat = [x for r in reports for x in r["latencies"]]
    firsts = [r["first_feedback_s"] for r in reports if "first_feedback_s" in r]
    row("all runs", f"{sum(r['kills'] for r in reports)} kills in {len(reports)} runs")
    if lat:
        row("  answer -> feedback", f"p50 {percentile(lat, 50):.2f} s, p95 "
            f"{percentile(lat, 95):.2f} s, max {max(lat):.2f} s over {len(lat)}")  # fmt: skip
    if firsts:
        row("  first feedback", f"{max(firsts):.2f} s after ready at most")
    lost, dup = sum(r["lost"] for r in reports), sum(r["duplicated"] for r in reports)
    row("  lost / duplicated", f"{lost} / {dup} (in {sum(r['duplicated'] > 0 for r in reports)} "
        f"of {len(reports)} runs)")  # fmt: skip
    if any(r["stopped"] for r in reports):
        return 2
    return 1 if lost else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--questions", type=int, default=2, help="per person")
    parser.add_argument("--arrive", type=float, default=60.0, help="people arrive over this, s")
    parser.add_argument("--think", type=float, default=8.0, help="longest think time, s")
    parser.add_argument("--kills", type=int, default=3, help="SIGKILLs a run")
    parser.add_argument("--down", type=float, default=3.0, help="s before a killed one restarts")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=30, help="the fake's global messages/s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=400.0, help="per run, s")
    parser.add_argument("--cache-dir", help="EMBEDDING_CACHE_DIR (default: a fresh temp dir)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
