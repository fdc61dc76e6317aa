"""`python -m bot run` as a child process against the fake Bot API: start it, stop it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import aiohttp

from tests.e2e.conftest import wait_ready
from tests.fake_telegram import FakeTelegram

ROOT = Path(__file__).resolve().parents[2]


async def launch(
    fake: FakeTelegram, db_url: str, log: Path, env: dict[str, str] | None = None
) -> asyncio.subprocess.Process:
    """Start the bot and wait until it has set its commands (it is polling then); the bank's
    vectors are warm (tests/e2e/conftest.py: warm_children)."""
    return (await launch_many(fake, db_url, [(log, env)]))[0]


async def launch_many(
    fake: FakeTelegram, db_url: str, bots: list[tuple[Path, dict[str, str] | None]]
) -> list[asyncio.subprocess.Process]:
    """Start several bots (log file, environment) side by side; wait until every one has set
    its four command menus."""
    before = len(fake.sent(method="setMyCommands"))
    processes = []
    for log, env in bots:
        environment = {
            **os.environ,
            "BOT_TOKEN": fake.token,
            "TELEGRAM_API_URL": fake.url,
            "DATABASE_URL": db_url,
            "POLLING_TIMEOUT": "1",
            "HF_HUB_OFFLINE": "1",
            "LOG_LEVEL": "INFO",
            **(env or {}),
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run",
            cwd=ROOT, env=environment, stdout=log.open("ab"), stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        processes.append(process)
    exits = [asyncio.ensure_future(p.wait()) for p in processes]
    first_exit = asyncio.ensure_future(asyncio.wait(exits, return_when=asyncio.FIRST_COMPLETED))
    try:
        ready = await wait_ready(fake, before + 4 * (len(bots) - 1), first_exit)
    except TimeoutError:
        for process in processes:
            process.kill()
        raise AssertionError("\n".join(log.read_text()[-3000:] for log, _ in bots)) from None
    finally:
        first_exit.cancel()
        for exit_ in exits:
            exit_.cancel()
    if not ready:
        for process in processes:
            if process.returncode is None:
                process.kill()
        logs = "\n".join(log.read_text()[-3000:] for log, _ in bots)
        raise AssertionError(f"a bot exited:\n{logs}")
    return processes


async def terminate(process: asyncio.subprocess.Process) -> None:
    """SIGTERM, as a service manager stops the bot; SIGKILL if it does not exit in 20 s."""
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()


def children(pid: int) -> list[int]:
    """Live child processes of `pid` (the bot's grading process, GRADER_WORKER=process)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def until_ready(port: int, limit: float = 300) -> None:
    """Until the bot's /readyz on this port says it can grade (what the proxy routes by); the
    limit only guards against a hang (TimeoutError)."""
    async with aiohttp.ClientSession() as client, asyncio.timeout(limit):
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with client.get(f"http://127.0.0.1:{port}/readyz") as reply:
                    if reply.status == 200:
                        return
            await asyncio.sleep(0.1)
