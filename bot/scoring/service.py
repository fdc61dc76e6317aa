"""The grading queue: answers from the event loop, graded by the model host
(bot/scoring/model_host.py) without ever blocking the loop.

Answers that arrive together (a group answering one question, many chats at once) are graded
as one micro-batch: while the host grades a batch, new answers queue, and the next batch takes
them all (up to `max_batch`), so their sentences go through the model in one forward pass.
A person waiting in a private chat goes before bulk work (a closed group-round question's
answers, graded under `bulk_work()`): each batch is filled in (priority, arrival) order.

The host runs in a worker thread (`worker="thread"`: the CLI, the tests) or in a child process
(`"process"`: the bot, see bot/scoring/worker.py); the queue calls it the same way, with one of
ModelHost's methods. The blocking methods for the CLI always use this process's host.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.metrics import GRADING_BATCH, GRADING_QUEUE, GRADING_SECONDS
from bot.priority import current_priority
from bot.scoring import worker as grading_worker
from bot.scoring.grade_result import GradeResult
from bot.scoring.grader import Grader
from bot.scoring.host_config import HostConfig
from bot.scoring.host_config import grader_options as grader_options  # the CLI tools' import
from bot.scoring.model_host import Job, ModelHost
from bot.scoring.options import GraderOptions
from bot.scoring.reference import ReferenceGrader
from bot.scoring.vector_cache import load_vectors

log = logging.getLogger(__name__)

Worker = Literal["thread", "process"]
# A cold start computes the bank's questions nobody asked only after answers paused this long.
BANK_AFTER_IDLE = 1.0
T = TypeVar("T")


@dataclass(frozen=True)
class _Entry:
    rank: tuple[int, int]  # (priority, arrival): the lowest is graded first
    job: Job
    future: asyncio.Future[GradeResult]


class ScoringService:
    def __init__(
        self,
        bank: QuestionBank,
        config: HostConfig,
        max_batch: int = 64,
        worker: Worker = "thread",
    ):
        """The queue around a model host built from `config` (the one value both hosts, this
        process's and the grading process's, are built from: bot/scoring/host_config.py says
        what each setting means); `max_batch` and `worker` are the queue's own."""
        self.config = config  # what a grading process is sent to build the same host
        # This process's host: the worker thread's, and the CLI's blocking calls'.
        self.host = ModelHost(bank, config)
        self.worker = worker
        self._pool: ProcessPoolExecutor | None = None
        self._warming: Future[Any] | None = None  # a warm-up begun by prestart()
        self.bank = bank
        self.max_batch = max_batch
        self._finishing: asyncio.Task[None] | None = None
        self._started = False  # start() has loaded the model where it runs
        # One thread: the model is not shared between threads, and torch uses the cores itself.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader")
        self._queue: list[_Entry] = []
        self._arrivals = itertools.count()
        self._batcher: asyncio.Task[None] | None = None
        # Questions just asked, whose vectors a cold start computes before the rest of the bank.
        self._wanted: list[str] = []
        self._graded_at = float("-inf")  # the event loop's time when the last batch was graded
        # Sizes of the latest batches graded (for the benchmark and tests), bounded.
        self.batches: deque[int] = deque(maxlen=10_000)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        bank: QuestionBank,
        options: GraderOptions | None = None,
        serving: bool = False,
    ) -> ScoringService:
        """`serving`: as the bot runs it (GRADER_WORKER, GRADER_THREADS); else in a thread of
        this process, on every core (the CLI tools)."""
        return cls(
            bank,
            HostConfig.from_settings(settings, options, serving),
            max_batch=settings.grader_max_batch,
            worker=settings.grader_worker if serving else "thread",
        )

    # --- where the model runs -----------------------------------------------------------------

    def _process_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                # spawn: a fork of a process with running threads (the event loop's) is unsafe.
                mp_context=multiprocessing.get_context("spawn"),
                initializer=grading_worker.start,
                initargs=(
                    ModelHost,
                    self.bank,
                    self.config,
                    os.getpid(),
                    logging.getLogger().getEffectiveLevel(),
                ),
            )
        return self._pool

    async def _run(self, method: Callable[..., T], *args: Any) -> T:
        """`host.method(*args)` on the host in the worker thread or in the grading process
        (`method` is one of ModelHost's, e.g. `ModelHost.warm_step`). A process that died
        (killed for memory, say) is replaced once, and the call made again there."""
        loop = asyncio.get_running_loop()
        if self.worker == "thread":
            return await loop.run_in_executor(self._executor, method, self.host, *args)
        try:
            return await loop.run_in_executor(
                self._process_pool(), grading_worker.call, method, *args
            )
        except BrokenProcessPool:
            log.error("the grading process died; starting a new one")
            self._discard_pool()
            await loop.run_in_executor(
                self._process_pool(), grading_worker.call, ModelHost.warm_up, True
            )
            return await loop.run_in_executor(
                self._process_pool(), grading_worker.call, method, *args
            )

    def _discard_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None

    # --- this process's host (the CLI tools) -------------------------------------------------

    def cache_path(self, device: str | None = None) -> Path | None:
        """The file of the bank's vectors for this model, device and bank; None: no cache."""
        return self.host.cache_path(device)

    def warm_cache(self) -> tuple[Path, bool]:
        """Compute and store the bank's vectors unless stored already (then the model is not
        even loaded). Returns the file and whether it was computed now; OSError if it could
        not be written."""
        path = self.cache_path()
        if path is None:
            raise ValueError("no cache directory configured")
        if load_vectors(path):
            return path, False
        self._executor.submit(self.host.load, True).result()
        if not path.exists():
            raise OSError(f"could not write {path}")
        return path, True

    def grader(self) -> Grader:
        return self.host.grader()

    def warm_grader(self) -> Grader:
        """The grader with the bank's vectors loaded (from the cache file, else computed and
        stored): for the CLI tools that grade many answers in this thread."""
        return self.host.warm_grader()

    def reference_grader(self) -> ReferenceGrader:
        return self.host.reference_grader()

    # --- starting, from the event loop -------------------------------------------------------

    async def _finish_warming(self) -> None:
        """The rest of the bank, a question at a time whenever no answer is waiting: people
        come first (a question's vectors are computed when it is graded anyway). Questions just
        asked come next; the rest only once answers have paused for BANK_AFTER_IDLE, since a
        step holds the model for up to a second that an answer arriving would wait for."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                batcher = self._batcher
                if batcher is not None and not batcher.done() and batcher.get_loop() is loop:
                    await asyncio.wait({batcher})
                    continue
                idle = loop.time() - self._graded_at
                if not self._wanted and idle < BANK_AFTER_IDLE:
                    await asyncio.sleep(BANK_AFTER_IDLE - idle)
                    continue
                wanted, self._wanted = self._wanted, []
                if not await self._run(ModelHost.warm_step, wanted):
                    break
        except Exception:  # the service closed meanwhile, or storing failed: next start redoes it
            log.warning("the question bank's warm-up did not finish", exc_info=True)

    def prepare(self, question_ids: Sequence[str]) -> None:
        """Questions just asked: while the bank's vectors are still being computed (a cold
        start), theirs come next, so that the answer, seconds later, finds them ready instead of
        waiting for them. Nothing to do once the bank is warm."""
        if self._finishing is None or self._finishing.done():
            return
        self._wanted.extend(q for q in question_ids if q not in self._wanted)

    def prestart(self) -> None:
        """Begin loading the model and the bank's vectors in the grading process now, without an
        event loop; `start()` then waits for it. (A thread worker loads in `start()`.)"""
        if self.worker == "process" and self._warming is None:
            self._warming = self._process_pool().submit(
                grading_worker.call, ModelHost.warm_up, True
            )

    async def start(self, warm: bool = True) -> None:
        """Load the model (and the bank's vectors) where it will run; once (a started service
        passed to another app run, as the tests do, is not started again)."""
        if self._started:
            return
        pending, self._warming = self._warming, None
        left = None
        if pending is not None:
            try:
                left = await asyncio.wrap_future(pending)
            except BrokenProcessPool:
                log.error("the grading process died while loading; starting a new one")
                self._discard_pool()
        if left is None:
            left = await self._run(ModelHost.warm_up, warm)
        if left:
            self._finishing = asyncio.get_running_loop().create_task(self._finish_warming())
        self._started = True

    def ready(self) -> bool:
        """The model is loaded where it runs and the whole bank's vectors are computed (or the
        background warm-up gave up: a question's vectors are then computed when it is graded)."""
        return self._started and (self._finishing is None or self._finishing.done())

    async def warmed(self) -> None:
        """Until the bank's background warm-up (if any) has finished and been stored."""
        if self._finishing is not None:
            await asyncio.shield(self._finishing)

    async def seconds_without_model(self, jobs: Sequence[Job]) -> float:
        """Grading `jobs` where the model runs, less the model's own time (`bench`)."""
        return await self._run(ModelHost.seconds_without_model, jobs)

    async def peak_rss_mib(self) -> float:
        """The peak resident memory of the process the model runs in."""
        return await self._run(ModelHost.peak_rss_mib)

    async def gpu_peak_mib(self) -> float:
        """The most CUDA memory the model's process has held."""
        return await self._run(ModelHost.gpu_peak_mib)

    async def describe(self) -> tuple[str, str]:
        """(device, precision) of the loaded model, wherever it runs."""
        return await self._run(ModelHost.describe)

    # --- grading from the event loop ---------------------------------------------------------

    async def grade(self, question: Question, answer: str, lang: str | None = None) -> GradeResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[GradeResult] = loop.create_future()
        rank = (int(current_priority()), next(self._arrivals))
        self._queue.append(_Entry(rank, (question, answer, lang), future))
        GRADING_QUEUE.set(len(self._queue))
        batcher = self._batcher
        # A batcher left behind by a closed event loop (tests run several) never finishes.
        if batcher is None or batcher.done() or batcher.get_loop() is not loop:
            self._batcher = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0)  # answers sent in the same tick join this batch
            # Only this loop's callers: a future of a closed loop can never be resolved.
            mine = [e for e in self._queue if e.future.get_loop() is loop and not e.future.done()]
            if not mine:
                self._queue = [e for e in self._queue if not e.future.done()]
                return
            batch = sorted(mine, key=lambda e: e.rank)[: self.max_batch]
            taken = {id(e) for e in batch}
            self._queue = [e for e in self._queue if id(e) not in taken and not e.future.done()]
            self.batches.append(len(batch))
            GRADING_QUEUE.set(len(self._queue))
            GRADING_BATCH.observe(len(batch))
            started = time.perf_counter()
            try:
                outcomes: list[GradeResult | BaseException] = list(
                    await self._run(ModelHost.grade_many_safe, [e.job for e in batch])
                )
                GRADING_SECONDS.observe(time.perf_counter() - started)
            except BaseException as exc:  # never leave a caller waiting forever
                outcomes = [exc] * len(batch)
                if isinstance(exc, asyncio.CancelledError):
                    for entry in batch:
                        entry.future.cancel()
                    raise
            self._graded_at = loop.time()
            for entry, outcome in zip(batch, outcomes, strict=True):
                if entry.future.done():  # the caller gave up waiting
                    continue
                if isinstance(outcome, BaseException):
                    entry.future.set_exception(outcome)
                else:
                    entry.future.set_result(outcome)

    # --- blocking variants for the CLI, where there is no event loop to protect ------------

    def grade_blocking(
        self, question: Question, answer: str, lang: str | None = None
    ) -> GradeResult:
        return self.grade_many_blocking([(question, answer, lang)])[0]

    def grade_many_blocking(self, jobs: list[Job]) -> list[GradeResult]:
        return self._executor.submit(self.host.grade_many, jobs).result()

    def grade_reference_blocking(
        self, question: str, reference: str, answer: str, lang: str | None = None
    ) -> GradeResult:
        return self._executor.submit(
            self.host.grade_reference, question, reference, answer, lang
        ).result()

    def close(self) -> None:
        if self._finishing is not None and not self._finishing.done():
            with contextlib.suppress(RuntimeError):  # its loop may be closed already
                self._finishing.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._pool is not None:
            # Waiting lets the pool's manager thread finish: left running, Python 3.11's exit
            # hook may write to its closed wake-up pipe and print "Bad file descriptor".
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._discard_pool()
