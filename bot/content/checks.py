"""Runs the question bank's executable checks (`checks:` in content/pytorch/<id>.yaml).

Each check is a short Python snippet that demonstrates a key point or a pitfall's correction on
CPU PyTorch. They run one at a time in a worker subprocess that imports torch once; each gets a
fresh namespace and a time limit. A check that hangs or kills the interpreter is reported as such
and the worker is restarted for the next one, so one bad snippet never takes the others down.

A check marked `needs: gpu` is skipped where torch.cuda.is_available() is false; one marked
`needs: processes` (several processes, e.g. DDP) is skipped unless the runner is told to run
them. `python -m bot content checks` runs the whole bank; tests/unit/test_content_checks.py too.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from bot.content.loader import QuestionBank
    from bot.content.schema import Check

DEFAULT_TIMEOUT = 20.0  # seconds per check; a check is meant to take well under 2
STARTUP_TIMEOUT = 300.0  # importing torch on a busy machine
ROOT = Path(__file__).resolve().parents[2]

PASSED, FAILED, SKIPPED, TIMED_OUT = "passed", "failed", "skipped", "timed out"


@dataclass(frozen=True)
class CheckResult:
    question_id: str
    index: int  # the check's position in the question's `checks:` list
    shows: tuple[str, ...]
    outcome: str  # passed | failed | skipped | timed out
    message: str = ""  # the assertion's message, the error, or why it was skipped
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.outcome in (PASSED, SKIPPED)


def bank_checks(bank: QuestionBank) -> list[tuple[str, int, Check]]:
    """Every check of the bank as (question id, index, check), in bank order."""
    return [(q.id, i, check) for q in bank for i, check in enumerate(q.checks)]


def pitfall_coverage(bank: QuestionBank) -> tuple[list[str], list[str]]:
    """The bank's pitfalls as "question/pitfall", split into those that a check shows (its
    `shows` names the pitfall) and those that none does."""
    covered: list[str] = []
    missing: list[str] = []
    for q in bank:
        shown = {s for check in q.checks for s in check.shows}
        for pitfall in q.pitfalls:
            (covered if pitfall.id in shown else missing).append(f"{q.id}/{pitfall.id}")
    return covered, missing


class CheckRunnerError(RuntimeError):
    """The worker could not be started (torch missing, or it did not come up in time)."""


class _Worker:
    """One `python -m bot.content.checks --worker` process and a thread reading its answers."""

    def __init__(self, python: str, warm: bool, startup_timeout: float) -> None:
        # A file, not a pipe: it can never fill up and block the worker. Closed by kill().
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        command = [python, "-m", "bot.content.checks", "--worker"]
        self.process = subprocess.Popen(
            [*command, *([] if warm else ["--no-warm"])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=ROOT,
            env=env,
            text=True,
            start_new_session=True,  # its own process group: a timeout kills its children too
        )
        self.answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        hello = self.receive(startup_timeout)
        if hello is None or not hello.get("ready"):
            self.kill()
            raise CheckRunnerError(f"the check worker did not start: {self.stderr_tail()}")
        self.cuda = bool(hello.get("cuda"))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.answers.put(json.loads(line))
            except json.JSONDecodeError:
                continue
        self.answers.put(None)  # end of file: the worker is gone

    def send(self, job: dict[str, str]) -> bool:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next answer; None when the worker exited; raises queue.Empty on a timeout."""
        return self.answers.get(timeout=timeout)

    def stderr_tail(self, limit: int = 800) -> str:
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - limit))
            return self.stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def exit_code(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                if hasattr(os, "killpg"):
                    os.killpg(self.process.pid, signal.SIGKILL)
                else:  # pragma: no cover - Windows
                    self.process.kill()
            except (ProcessLookupError, PermissionError):
                pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self.stderr.close()


class CheckRunner:
    """Runs checks one by one in a worker subprocess, restarting it after a timeout or crash.

    timeout: seconds per check; processes: run `needs: processes` checks instead of skipping
    them; warm: let the worker pay PyTorch's lazy imports (torch._dynamo, which the first
    optimizer pulls in, seconds) before the first check, so that each check's time is its own.
    """

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        processes: bool = False,
        warm: bool = True,
        python: str = sys.executable,
        startup_timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        self.timeout = timeout
        self.processes = processes
        self.warm = warm
        self.python = python
        self.startup_timeout = startup_timeout
        self._worker: _Worker | None = None
        self.restarts = 0

    def __enter__(self) -> CheckRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None

    def worker(self) -> _Worker:
        if self._worker is None:
            self._worker = _Worker(self.python, self.warm, self.startup_timeout)
        return self._worker

    @property
    def cuda(self) -> bool:
        """Whether the worker's torch sees a GPU (starts the worker)."""
        return self.worker().cuda

    def run(self, question_id: str, index: int, check: Check) -> CheckResult:
        def result(outcome: str, message: str = "", seconds: float = 0.0) -> CheckResult:
            return CheckResult(question_id, index, check.shows, outcome, message, seconds)

        if check.needs == "processes" and not self.processes:
            return result(SKIPPED, "needs several processes (run with --processes)")
        if check.needs == "gpu" and not self.cuda:
            return result(SKIPPED, "needs a GPU: torch.cuda.is_available() is false")
        if check.needs == "processes":  # forks from a clean worker, which goes after it
            self.close()
            try:
                return self._execute(question_id, index, check)
            finally:
                self.close()
        return self._execute(question_id, index, check)

    def _execute(self, question_id: str, index: int, check: Check) -> CheckResult:
        def result(outcome: str, message: str = "", seconds: float = 0.0) -> CheckResult:
            return CheckResult(question_id, index, check.shows, outcome, message, seconds)

        worker = self.worker()
        job = {"code": check.code, "name": f"<check {question_id}[{index}]>"}
        if not worker.send(job):  # it died between checks: start a new one
            self._restart()
            worker = self.worker()
            worker.send(job)
        started = time.perf_counter()
        try:
            answer = worker.receive(self.timeout)
        except queue.Empty:
            self._restart()
            return result(TIMED_OUT, f"no result within {self.timeout:g} s", self.timeout)
        if answer is None:
            code, tail = worker.exit_code(), worker.stderr_tail()
            self._restart()
            message = f"the interpreter exited (code {code})" + (f": {tail}" if tail else "")
            return result(FAILED, message, time.perf_counter() - started)
        return result(answer["outcome"], answer.get("message", ""), answer.get("seconds", 0.0))

    def _restart(self) -> None:
        self.close()
        self.restarts += 1


def run_checks(
    items: Iterable[tuple[str, int, Check]],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    processes: bool = False,
) -> list[CheckResult]:
    """Runs (question id, index, check) items in one worker; see bank_checks."""
    with CheckRunner(timeout, processes=processes) as runner:
        return [runner.run(question_id, index, check) for question_id, index, check in items]


def format_results(results: Iterable[CheckResult], *, all_rows: bool = True) -> str:
    """A table: question, index, outcome, seconds, what it shows, and the message."""
    lines = []
    for r in results:
        if not all_rows and r.outcome == PASSED:
            continue
        message = f"  {r.message}" if r.message else ""
        lines.append(
            f"{r.question_id:30} {r.index:2} {r.outcome:9} {r.seconds:6.2f}s "
            f"{','.join(r.shows)}{message}"
        )
    return "\n".join(lines)


# --- the worker (runs in the subprocess) ---------------------------------------------------


def _failure(exc: BaseException, code: str, name: str) -> str:
    """The assertion's message, else the error; with the snippet's line that raised it."""
    line = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == name and frame.lineno:
            source = code.splitlines()[frame.lineno - 1].strip()
            line = f" (line {frame.lineno}: {source})"
            break
    if isinstance(exc, AssertionError):
        return (str(exc) or "assertion failed") + line
    return f"{type(exc).__name__}: {exc}{line}"


def _reset(torch: Any) -> None:
    """Undo global switches a check may have flipped, so that the next one starts clean."""
    try:
        torch.set_grad_enabled(True)
        if torch.are_deterministic_algorithms_enabled():  # the setter's first call is slow
            torch.use_deterministic_algorithms(False)
        torch.set_default_dtype(torch.float32)
        torch.set_num_threads(1)
        if torch.cuda.is_available():
            torch.cuda.set_sync_debug_mode(0)
    except Exception:  # pragma: no cover - a check broke torch itself; the next one will say
        pass


def _execute(code: str, name: str, torch: Any) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "__check__", "__builtins__": builtins}
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():  # a check's warning filters end with it
            exec(compile(code, name, "exec"), namespace)
        outcome, message = PASSED, ""
    except BaseException as exc:  # SystemExit too: a check must not end the worker quietly
        outcome, message = FAILED, _failure(exc, code, name)
    finally:
        _reset(torch)
    return {"outcome": outcome, "message": message, "seconds": time.perf_counter() - started}


def _worker_main(argv: list[str]) -> int:
    # Answers go to a private copy of stdout; whatever a check prints lands in stderr.
    answers: IO[str] = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import torch

    torch.set_num_threads(1)  # tiny tensors: threads only contend with each other
    if "--no-warm" not in argv:
        import numpy  # noqa: F401

        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)  # imports torch._dynamo
        torch.ones(1, device="meta") + 1  # registers the meta kernels
    hello = {"ready": True, "cuda": torch.cuda.is_available(), "torch": torch.__version__}
    answers.write(json.dumps(hello) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        answers.write(json.dumps(_execute(job["code"], job["name"], torch)) + "\n")
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        sys.exit(_worker_main(sys.argv[1:]))
    sys.exit("usage: python -m bot.content.checks --worker (use `python -m bot content checks`)")
