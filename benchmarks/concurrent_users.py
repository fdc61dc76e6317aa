"""Benchmark (not a test): N users answering interview questions at once, through the real path:
`python -m bot run` in its own process, polling the fake Bot API, which runs in another process
together with the simulated users.

Each user sends `/interview junior 3` and answers every question after a think time uniform in
[0, --think] s, with a labelled answer for that question from content/eval or content/heldout
(people's answers of every kind and length; the model answer only for a question neither has).
Latency: from pushing the answer into the fake until the fake receives the bot's feedback
("Score: …"). Prints latency p50/p95/max, answers/s, lost or duplicated feedback, 429s and the
bot's peak RSS; exits 1 if an answer was lost or duplicated, 2 if the run did not finish.

    .venv/bin/python benchmarks/concurrent_users.py               # 50 users, cold bank vectors
    .venv/bin/python benchmarks/concurrent_users.py --users 5 --cache-dir data/cache  # warm
    .venv/bin/python benchmarks/concurrent_users.py --users 1000 --questions 1 --replicas 3 \
        --database-url postgresql+asyncpg://postgres@127.0.0.1/bench --redis-url redis://127.0.0.1
    GRADER_ONE_PASS=true .venv/bin/python benchmarks/concurrent_users.py --model bundled --lang ru
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIRST_ID = 20_000_000
WARMUP_ID = FIRST_ID - 1  # answers once before the clock starts; not in the figures
SETTLE = 2.0  # seconds to keep listening after the last summary: a duplicate would come then
# HTML starts of the bot's question, feedback and summary messages (bot/i18n.py, rendering.py).
PREFIXES = {
    "en": ("<b>Question", "<b>Score: ", "<b>Interview finished"),
    "ru": ("<b>Вопрос", "<b>Оценка: ", "<b>Собеседование завершено"),
}


@dataclass
class Sent:
    at: float  # time.monotonic() when the fake received the sendMessage
    html: str
    text: str  # as the user sees it


@dataclass
class Answer:
    user: int
    sent_at: float
    labelled: bool  # from content/eval or content/heldout, not the model answer
    feedback_at: float | None = None


class Users:
    """The simulated users, and every message the bot sent them, timed on arrival."""

    def __init__(self, fake: Any, lang: str, bank: Any, samples: list[Any]) -> None:
        from bot.services.answer_policy import accept

        self.fake, self.lang, self.bank = fake, lang, bank
        self.inbox: defaultdict[int, list[Sent]] = defaultdict(list)
        self.cursor: defaultdict[int, int] = defaultdict(int)
        self.arrived: defaultdict[int, asyncio.Event] = defaultdict(asyncio.Event)
        self.records: list[Answer] = []
        self.unmatched: list[str] = []
        # Only answers the bot grades: a too-short one gets a "write more" reply, no feedback.
        self.pool: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
        for s in samples:
            if s.question_id and not accept(s.answer).too_short:
                self.pool[(s.question_id, s.lang)].append(s.answer)
        # FakeTelegram finds handlers with getattr on the instance, so wrapping the bound method
        # times every accepted sendMessage without changing tests/fake_telegram.py.
        handler = fake._m_sendmessage

        async def timed(params: dict[str, Any]) -> dict[str, Any]:
            at = time.monotonic()
            result: dict[str, Any] = await handler(params)
            chat = int(params["chat_id"])
            self.inbox[chat].append(Sent(at, str(params.get("text", "")), result["text"]))
            self.arrived[chat].set()
            return result

        fake._m_sendmessage = timed

    async def expect(self, chat: int, prefix: str) -> Sent:
        """The next message to `chat`, after those already taken, whose HTML starts so."""
        while True:
            messages = self.inbox[chat]
            for index in range(self.cursor[chat], len(messages)):
                if messages[index].html.startswith(prefix):
                    self.cursor[chat] = index + 1
                    return messages[index]
            self.arrived[chat].clear()  # no await since the scan: nothing can slip in between
            await self.arrived[chat].wait()

    def answer_for(self, text: str, rng: random.Random) -> tuple[str, bool]:
        """A labelled answer to the question in `text` (matched to the bank the way
        tests/e2e/conftest.py's find_question does), and whether it is a labelled one."""
        for q in self.bank:
            if q.question.en in text or q.question.ru in text:
                pool = self.pool.get((q.id, self.lang))
                return (rng.choice(pool), True) if pool else (q.answer.get(self.lang), False)
        self.unmatched.append(text[:80])
        return ("не знаю" if self.lang == "ru" else "I don't know"), False  # graded 0/10

    async def interview(self, uid: int, count: int, think: float, rng: random.Random) -> None:
        asked, scored, finished = PREFIXES[self.lang]
        user = self.fake.user(uid, self.lang)
        self.fake.send_text(user, f"/interview junior {count}")
        for _ in range(count):
            question = await self.expect(uid, asked)
            await asyncio.sleep(rng.uniform(0, think))
            text, labelled = self.answer_for(question.text, rng)
            record = Answer(uid, time.monotonic(), labelled)
            if uid != WARMUP_ID:
                self.records.append(record)
            self.fake.send_text(user, text)  # the bot can fetch it from now on
            record.feedback_at = (await self.expect(uid, scored)).at
        await self.expect(uid, finished)

    def feedbacks(self, uid: int) -> int:
        return sum(1 for s in self.inbox[uid] if s.html.startswith(PREFIXES[self.lang][1]))


async def scenario(fake: Any, users: Users, o: dict[str, Any], report: dict[str, Any]) -> None:
    began = time.monotonic()
    # Ready: the four command menus are set and getUpdates was called (bot/app.py: the grader
    # is loaded and the bank's vectors computed before either). serve() enforces --timeout.
    replicas = max(1, len(o["ports"]))
    await fake.wait_for(
        lambda s: (
            len(s.sent(method="setMyCommands")) >= 4 * replicas and (s.poll_offsets or s.webhook)
        ),
        o["timeout"] + 60,
    )
    report["ready_s"] = time.monotonic() - began
    await users.interview(WARMUP_ID, 1, 0.0, random.Random(0))  # first grade's one-off costs
    report["warmup_s"] = time.monotonic() - began - report["ready_s"]
    report["started"] = time.monotonic()
    results = await asyncio.gather(
        *(
            users.interview(FIRST_ID + i, o["questions"], o["think"], random.Random(o["seed"] + i))
            for i in range(o["users"])
        ),
        return_exceptions=True,
    )
    report["errors"] = [repr(r) for r in results if isinstance(r, BaseException)]
    await asyncio.sleep(SETTLE)


async def serve(conn: Any, o: dict[str, Any], abort: Any) -> None:
    from bot.content.loader import load_bank
    from bot.evaluation.datasets import load_bank_eval
    from tests.fake_telegram import FakeTelegram

    fake = FakeTelegram(global_rate=o["limit"] or None)
    # Webhook replicas: the fake posts to them in turn, as a load balancer would.
    fake.webhook_targets = [f"http://127.0.0.1:{p}/telegram/hook" for p in o["ports"]]
    # content/eval and content/heldout together hold written answers for every bank question.
    samples = [
        s
        for folder in ("eval", "heldout")
        for s in load_bank_eval(ROOT / "content" / folder).samples
    ]
    users = Users(fake, o["lang"], load_bank(), samples)
    conn.send(await fake.start())
    report: dict[str, Any] = {"stopped": None, "errors": []}
    run = asyncio.create_task(scenario(fake, users, o, report))
    deadline = time.monotonic() + o["timeout"]
    while not run.done():  # the parent sets `abort` when the bot process exits
        if abort.is_set() or time.monotonic() > deadline:
            report["stopped"] = "the bot exited" if abort.is_set() else f"timeout {o['timeout']}s"
            run.cancel()
        await asyncio.wait({run}, timeout=0.5)
    with contextlib.suppress(asyncio.CancelledError):
        if (error := run.exception()) is not None:
            report["stopped"] = repr(error)
    ids = range(FIRST_ID, FIRST_ID + o["users"])
    sent = Counter(r.user for r in users.records)
    report.update(
        latencies=[r.feedback_at - r.sent_at for r in users.records if r.feedback_at],
        answered=len(users.records),
        lost=sum(1 for r in users.records if r.feedback_at is None),
        duplicated=sum(max(0, users.feedbacks(uid) - sent[uid]) for uid in ids),
        last_feedback=max((r.feedback_at for r in users.records if r.feedback_at), default=None),
        unmatched=users.unmatched,
        labelled=sum(r.labelled for r in users.records),
        rejected_429=sum(1 for m, _ in fake.requests if m == "sendMessage:429"),
    )
    conn.send(report)
    with contextlib.suppress(EOFError):
        await asyncio.to_thread(conn.recv)  # "stop": the bot is down, the fake may go
    await fake.stop()


def fake_server(conn: Any, options: dict[str, Any], abort: Any) -> None:
    """Child process: the fake Bot API and the users; sends its URL, then the report."""
    asyncio.run(serve(conn, options, abort))


def peak_rss_mib(pid: int) -> float | None:
    """VmHWM of a live process: its resident-memory high-water mark."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (the bot's grading process)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def row(label: str, value: object, end: str = "\n") -> None:
    print(f"{label:<20} {value}", end=end)


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q% of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, int(-(-len(ordered) * q // 100)) - 1)] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--questions", type=int, default=3, help="per user: /interview junior N")
    parser.add_argument("--think", type=float, default=2.0, help="longest think time, s")
    parser.add_argument("--lang", choices=("en", "ru"), default="en")
    parser.add_argument("--model", help="EMBEDDING_MODEL for the bot (default: the project's)")
    parser.add_argument("--cache-dir", help="EMBEDDING_CACHE_DIR (default: a fresh temp dir)")
    parser.add_argument("--limit", type=int, default=30, help="the fake's global messages/s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="for the whole run, s")
    parser.add_argument(
        "--replicas", type=int, default=0,
        help="0: one bot polling; N: N bots in webhook mode behind the fake's load balancer",
    )  # fmt: skip
    parser.add_argument("--database-url", help="DATABASE_URL (default: a fresh SQLite file)")
    parser.add_argument("--redis-url", help="REDIS_URL for the replicas' shared limits")
    args = parser.parse_args()
    options = {**vars(args), "ports": [free_port() for _ in range(args.replicas)]}
    from bot.config import DEFAULT_MODEL

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    abort = ctx.Event()
    server = ctx.Process(target=fake_server, args=(child, options, abort), daemon=True)
    server.start()
    while not parent.poll(0.5):  # a fake that fails while starting must not leave us waiting
        if not server.is_alive():
            print("error: the fake Bot API stopped while starting (above: why)", file=sys.stderr)
            return 2
    api_url = parent.recv()
    report: dict[str, Any] | None = None
    rss: float | None = None
    grading: list[float] = []
    died: int | None = None
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,  # passes GRADER_*, SEND_RATE, EMBEDDING_DEVICE… through unchanged
            "BOT_TOKEN": "123456:TEST-TOKEN",  # FakeTelegram's default token
            "TELEGRAM_API_URL": api_url,
            # migrated on start
            "DATABASE_URL": args.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}",
            "EMBEDDING_CACHE_DIR": str(Path(args.cache_dir or Path(tmp) / "cache").resolve()),
            "HF_HUB_OFFLINE": "1",
        }
        if args.model:
            env["EMBEDDING_MODEL"] = args.model
        # Stopping waits for the long poll in flight; a poll returns as soon as an update
        # arrives, so a short timeout speeds up shutdown without changing any latency.
        env.setdefault("POLLING_TIMEOUT", "1")
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
        log = Path(tmp) / "bot.log"
        bots = []
        with log.open("wb") as out:
            for port in options["ports"] or [None]:
                extra = {} if port is None else {
                    "BOT_MODE": "webhook", "WEBHOOK_URL": "https://bench.invalid/telegram/hook",
                    "WEBHOOK_SECRET": "bench-secret", "WEBHOOK_HOST": "127.0.0.1",
                    "WEBHOOK_PORT": str(port),
                }  # fmt: skip
                bots.append(
                    subprocess.Popen([sys.executable, "-m", "bot", "run"], cwd=ROOT,
                                     env={**env, **extra}, stdout=out, stderr=out)
                )  # fmt: skip
        try:
            guard = time.monotonic() + args.timeout + 60  # the child stops itself at --timeout
            while not parent.poll(0.5) and time.monotonic() < guard and server.is_alive():
                if any(bot.poll() is not None for bot in bots):
                    abort.set()
            report = parent.recv() if parent.poll() else None
            rss = sum(peak_rss_mib(bot.pid) or 0.0 for bot in bots)
            grading = [peak_rss_mib(c) or 0.0 for bot in bots for c in children(bot.pid)]
            died = next((bot.poll() for bot in bots if bot.poll() is not None), None)
        finally:
            for bot in bots:
                bot.terminate()
            for bot in bots:
                try:
                    bot.wait(20)
                except subprocess.TimeoutExpired:
                    bot.kill()
                    bot.wait()
            with contextlib.suppress(OSError):
                parent.send("stop")
            server.join(10)
            if server.is_alive():
                server.kill()
        lines = log.read_text(errors="replace").splitlines()
    problems = [x for x in lines if " ERROR " in x or " CRITICAL " in x or "Traceback" in x]

    model = env.get("EMBEDDING_MODEL", DEFAULT_MODEL)
    passed = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(("GRADER_", "SEND_")))
    row("machine", f"{os.cpu_count()} CPUs, {cpu_name()}, load {os.getloadavg()[0]:.1f}")
    row("model", " ".join([model, *passed]))
    if report is None or died is not None:
        print(f"bot exit code {died}; the last lines of its log:", *lines[-30:], sep="\n")
    if report is None:
        return 2
    lat, n = report["latencies"], len(report["latencies"])
    nan = float("nan")
    row("bot ready after", f"{report.get('ready_s', nan):.1f} s (warm-up answer ", end="")
    print(f"{report.get('warmup_s', nan):.1f} s, not counted)")
    row("users", f"{args.users} × {args.questions} questions, think 0–{args.think:g} s")
    where = f"{args.replicas} webhook replicas" if args.replicas else "one bot, polling"
    row("bots", f"{where}; database {env['DATABASE_URL'].split(':')[0]}"
        + (", Redis" if args.redis_url else ""))  # fmt: skip
    row("answers graded", f"{n} of {report['answered']} sent", end=" ")
    print(f"({report['labelled']} from content/eval and content/heldout, the rest model answers)")
    if n:
        wall = report["last_feedback"] - report["started"]
        row("wall time", f"{wall:.1f} s (clock start to last feedback)")
        row("answers/s", f"{n / wall:.2f}")
        for q in (50, 95):
            row(f"latency p{q}", f"{percentile(lat, q):.2f} s")
        row("latency max", f"{max(lat):.2f} s")
    row("lost", report["lost"])
    row("duplicated", report["duplicated"])
    row("429 from the fake", f"{report['rejected_429']} (fake allows {args.limit}/s)")
    row("bots' peak RSS", f"{rss:.0f} MiB in all" if rss else "n/a")
    if grading:
        row("grading process peak RSS", " + ".join(f"{g:.0f} MiB" for g in grading))
    for label, items in (("unmatched", report["unmatched"]), ("user errors", report["errors"])):
        if items:
            row(label, f"{len(items)}: {items[:3]}")
    row("bot log problems", len(problems))
    print(*(f"  {x}" for x in problems[:10]), sep="\n", end="\n" if problems else "")
    if report["stopped"]:
        row("incomplete", report["stopped"])
        return 2
    return 1 if report["lost"] or report["duplicated"] else 0


if __name__ == "__main__":
    sys.exit(main())
