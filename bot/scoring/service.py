"""Runs the model in one worker thread, so grading never blocks the event loop.

Answers that arrive together (a group answering one question, many chats at once) are graded
as one micro-batch: while the worker grades a batch, new answers queue, and the next batch takes
them all (up to `max_batch`), so their sentences go through the model in one forward pass.
A person waiting in a private chat goes before bulk work (a closed group-round question's
answers, graded under `bulk_work()`): each batch is filled in (priority, arrival) order.

The model runs in a worker thread (`worker="thread"`: the CLI, the tests) or in a child process
(`"process"`: the bot, see bot/scoring/worker.py). The blocking methods for the CLI always run
in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import sys
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.metrics import GRADING_BATCH, GRADING_QUEUE, GRADING_SECONDS
from bot.priority import current_priority
from bot.scoring import worker as grading_worker
from bot.scoring.encoder import Encoder, resolve_device, resolve_precision
from bot.scoring.grader import Grader, GradeResult, GraderOptions
from bot.scoring.reference import ReferenceGrader
from bot.scoring.relevance_net.model import load_relevance_model
from bot.scoring.remote_encoder import RemoteEncoder
from bot.scoring.stance.model import load_stance_model
from bot.scoring.vector_cache import cache_file, load_vectors, save_vectors

log = logging.getLogger(__name__)

PREPARING = "preparing the question bank (first run only)…"
PREPARING_BACKGROUND = (
    "preparing the question bank (first run only): grading starts now, the rest of the bank "
    "is computed between answers"
)

Job = tuple[Question, str, str | None]
Worker = Literal["thread", "process"]


@dataclass(frozen=True)
class _Entry:
    rank: tuple[int, int]  # (priority, arrival): the lowest is graded first
    job: Job
    future: asyncio.Future[GradeResult]


def peak_rss_mib() -> float:
    """This process's peak resident memory (ru_maxrss is KiB on Linux, bytes on macOS)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


def set_cpu_threads(threads: int | None) -> None:
    """torch's intra-op threads: `threads`; 0: one fewer than the cores (at least 1), for a bot
    whose event loop and database share the machine (with every core in the model's parallel
    regions, each region waits for whichever thread they preempted); None: torch's default,
    every core (the CLI tools, which have nothing else to run)."""
    if threads is None:
        return
    import torch

    torch.set_num_threads(threads or max(1, (os.cpu_count() or 1) - 1))


def grader_options(settings: Settings) -> GraderOptions:
    return GraderOptions(
        encode_whole=settings.grader_whole_answer_pass,
        one_pass=settings.grader_one_pass,
        stance=settings.grader_stance,
        relevance=settings.grader_relevance,
    )


class ScoringService:
    def __init__(
        self,
        bank: QuestionBank,
        model: str,
        device: str,
        cache_dir: Path | None = None,
        max_batch: int = 64,
        options: GraderOptions | None = None,
        model_cache_dir: Path | None = None,
        precision: str = "auto",
        worker: Worker = "thread",
        threads: int | None = None,
        embeddings_url: str | None = None,
        background_warm: bool = False,
    ):
        """`embeddings_url`: vectors from an embedding server (TEI's API) instead of a model
        loaded here; the grading around them stays in this service. `background_warm`: with no
        stored vectors, `start()` computes only what every grade needs (the calibration, from
        all key points) and the rest of the bank afterwards, a question at a time whenever no
        grade is waiting, then stores it (the bot; the CLI tools warm everything first)."""
        # What a grading process needs to build the same service.
        self._config: dict[str, Any] = {
            "bank": bank,
            "model": model,
            "device": device,
            "cache_dir": cache_dir,
            "max_batch": max_batch,
            "options": options,
            "model_cache_dir": model_cache_dir,
            "precision": precision,
            "threads": threads,
            "embeddings_url": embeddings_url,
            "background_warm": background_warm,
        }
        self.worker = worker
        self._pool: ProcessPoolExecutor | None = None
        self._warming: Future[Any] | None = None  # a warm-up begun by prestart()
        self.bank = bank
        self._threads = threads
        self._precision = precision
        self._model = model
        self._device = device
        self._model_cache_dir = model_cache_dir
        self._cache_dir = cache_dir
        self._embeddings_url = embeddings_url
        self.max_batch = max_batch
        self._options = options
        self._background_warm = background_warm
        self._unwarmed: list[Question] = []  # bank questions whose vectors are not computed yet
        self._finishing: asyncio.Task[None] | None = None
        self._started = False  # start() has loaded the model where it runs
        # One thread: the model is not shared between threads, and torch uses the cores itself.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader")
        self._grader: Grader | None = None
        self._reference: ReferenceGrader | None = None
        self._queue: list[_Entry] = []
        self._arrivals = itertools.count()
        self._batcher: asyncio.Task[None] | None = None
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
            settings.embedding_model,
            settings.embedding_device,
            cache_dir=settings.embedding_cache_dir,
            max_batch=settings.grader_max_batch,
            options=options or grader_options(settings),
            model_cache_dir=settings.model_cache_dir,
            precision=settings.embedding_precision,
            worker=settings.grader_worker if serving else "thread",
            threads=settings.grader_threads if serving else None,
            embeddings_url=settings.embeddings_url,
            background_warm=serving,
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
                    type(self),
                    self._config,
                    os.getpid(),
                    logging.getLogger().getEffectiveLevel(),
                ),
            )
        return self._pool

    async def _run(self, method: str, *args: Any) -> Any:
        """`self.<method>(*args)` in the worker thread or the grading process. A process that
        died (killed for memory, say) is replaced once, and the call made again there."""
        loop = asyncio.get_running_loop()
        if self.worker == "thread":
            return await loop.run_in_executor(self._executor, getattr(self, method), *args)
        try:
            return await loop.run_in_executor(
                self._process_pool(), grading_worker.call, method, *args
            )
        except BrokenProcessPool:
            log.error("the grading process died; starting a new one")
            self._discard_pool()
            await loop.run_in_executor(self._process_pool(), grading_worker.call, "_warm_up", True)
            return await loop.run_in_executor(
                self._process_pool(), grading_worker.call, method, *args
            )

    def _discard_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None

    # --- loading (worker thread) ------------------------------------------------------------

    def cache_path(self, device: str | None = None) -> Path | None:
        """The file of the bank's vectors for this model, device and bank; None: no cache."""
        if self._cache_dir is None:
            return None
        device = device or resolve_device(self._device)
        # bf16 and fp16 vectors differ from fp32 ones in the fourth decimal: not shared.
        arithmetic = f"{device}/{resolve_precision(self._precision, device)}"
        return cache_file(self._cache_dir, self._model, arithmetic, self.bank.content_hash)

    def _load(self, warm: bool) -> Grader:
        if self._grader is None:
            # Loading and the bank's warm-up come before the bot serves anyone: every core.
            set_cpu_threads(None if self._threads is None else os.cpu_count() or 1)
            encoder: Encoder
            if self._embeddings_url:
                encoder = RemoteEncoder(self._embeddings_url, self._model)
                path = None  # the server computes the bank in one pass at start
                stance_device = resolve_device(self._device)
                stance_precision = resolve_precision(self._precision, stance_device)
            else:
                encoder = Encoder(
                    self._model,
                    self._device,
                    model_cache_dir=self._model_cache_dir,
                    precision=self._precision,
                )
                path = self.cache_path(encoder.device)
                stance_device = encoder.device
                stance_precision = encoder.precision
            cold = False
            if path is not None:
                stored = load_vectors(path)
                encoder.remember(stored)
                cold = not stored
            cached = len(encoder.remembered())
            # The pair models run where the encoder does (or, with a remote encoder, where it
            # would), each only where it was trained from this embedding model.
            options = self._options or GraderOptions()
            where = (self._model, None, self._model_cache_dir, stance_device, stance_precision)
            stance = load_stance_model(*where) if options.stance else None
            relevance = load_relevance_model(*where) if options.relevance else None
            grader = Grader(encoder, list(self.bank), self._options, stance, relevance)
            if warm and cold and self._background_warm:
                # Every grade needs the calibration (all key points, about a quarter of the
                # bank); the rest follows a question at a time (`_warm_step`).
                print(PREPARING_BACKGROUND, file=sys.stderr, flush=True)
                grader.baseline()
                self._unwarmed = list(self.bank)
            elif warm:
                if cold:  # tens of seconds on a CPU, once: say so rather than sit silent
                    print(PREPARING, file=sys.stderr, flush=True)
                grader.warm(list(self.bank), progress=cold)
                grader.baseline()
                if path is not None and len(encoder.remembered()) > cached:
                    save_vectors(path, encoder.remembered())
            set_cpu_threads(self._threads)
            self._grader = grader
        return self._grader

    def warm_cache(self) -> tuple[Path, bool]:
        """Compute and store the bank's vectors unless stored already (then the model is not
        even loaded). Returns the file and whether it was computed now; OSError if it could
        not be written."""
        path = self.cache_path()
        if path is None:
            raise ValueError("no cache directory configured")
        if load_vectors(path):
            return path, False
        self._executor.submit(self._load, True).result()
        if not path.exists():
            raise OSError(f"could not write {path}")
        return path, True

    def grader(self) -> Grader:
        return self._load(warm=False)

    def warm_grader(self) -> Grader:
        """The grader with the bank's vectors loaded (from the cache file, else computed and
        stored): for the CLI tools that grade many answers in this thread."""
        return self._load(warm=True)

    def reference_grader(self) -> ReferenceGrader:
        if self._reference is None:
            self._reference = ReferenceGrader(self.grader().encoder, list(self.bank))
        return self._reference

    def _warm_up(self, warm: bool) -> bool:
        """Load; True when part of the bank is left for `_warm_step`."""
        self._load(warm)
        return bool(self._unwarmed)

    def _warm_step(self) -> bool:
        """The vectors of the next bank question not computed yet; when none is left, store
        them all. True while more remain."""
        grader = self.grader()
        if self._unwarmed:
            grader.warm([self._unwarmed.pop(0)])
        if self._unwarmed:
            return True
        path = self.cache_path(grader.encoder.device)
        vectors = grader.encoder.remembered()  # a copy, taken under the encoder's lock: once
        if path is not None:
            save_vectors(path, vectors)
        log.info("question bank ready: %d texts' vectors", len(vectors))
        return False

    async def _finish_warming(self) -> None:
        """The rest of the bank, a question at a time whenever no answer is waiting: people
        come first (a question's vectors are computed when it is graded anyway)."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                batcher = self._batcher
                if batcher is not None and not batcher.done() and batcher.get_loop() is loop:
                    await asyncio.wait({batcher})
                    continue
                if not await self._run("_warm_step"):
                    break
        except Exception:  # the service closed meanwhile, or storing failed: next start redoes it
            log.warning("the question bank's warm-up did not finish", exc_info=True)

    def _describe(self) -> tuple[str, str]:
        encoder = self.grader().encoder
        return encoder.device, encoder.precision

    def prestart(self) -> None:
        """Begin loading the model and the bank's vectors in the grading process now, without an
        event loop; `start()` then waits for it. (A thread worker loads in `start()`.)"""
        if self.worker == "process" and self._warming is None:
            self._warming = self._process_pool().submit(grading_worker.call, "_warm_up", True)

    async def start(self, warm: bool = True) -> None:
        """Load the model (and the bank's vectors) where it will run."""
        pending, self._warming = self._warming, None
        left = None
        if pending is not None:
            try:
                left = await asyncio.wrap_future(pending)
            except BrokenProcessPool:
                log.error("the grading process died while loading; starting a new one")
                self._discard_pool()
        if left is None:
            left = await self._run("_warm_up", warm)
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

    def _seconds_without_model(self, jobs: Sequence[Job]) -> float:
        return self.grader().seconds_without_model(jobs)

    async def seconds_without_model(self, jobs: Sequence[Job]) -> float:
        """Grading `jobs` where the model runs, less the model's own time (`bench`)."""
        result: float = await self._run("_seconds_without_model", jobs)
        return result

    def _peak_rss_mib(self) -> float:
        return peak_rss_mib()

    async def peak_rss_mib(self) -> float:
        """The peak resident memory of the process the model runs in."""
        result: float = await self._run("_peak_rss_mib")
        return result

    def _gpu_peak_mib(self) -> float:
        import torch

        return float(torch.cuda.max_memory_allocated() / 2**20)

    async def gpu_peak_mib(self) -> float:
        """The most CUDA memory the model's process has held."""
        result: float = await self._run("_gpu_peak_mib")
        return result

    async def describe(self) -> tuple[str, str]:
        """(device, precision) of the loaded model, wherever it runs."""
        result: tuple[str, str] = await self._run("_describe")
        return result

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
                    await self._run("_grade_many_safe", [e.job for e in batch])
                )
                GRADING_SECONDS.observe(time.perf_counter() - started)
            except BaseException as exc:  # never leave a caller waiting forever
                outcomes = [exc] * len(batch)
                if isinstance(exc, asyncio.CancelledError):
                    for entry in batch:
                        entry.future.cancel()
                    raise
            for entry, outcome in zip(batch, outcomes, strict=True):
                if entry.future.done():  # the caller gave up waiting
                    continue
                if isinstance(outcome, BaseException):
                    entry.future.set_exception(outcome)
                else:
                    entry.future.set_result(outcome)

    def _grade_many_safe(self, jobs: list[Job]) -> list[GradeResult | Exception]:
        """One batch; if it fails, grade one by one so one bad answer fails alone."""
        grader = self.grader()  # raises only if the model cannot load: every caller gets it
        try:
            return list(grader.grade_many(jobs))
        except Exception:
            log.exception("batch of %d failed; grading one at a time", len(jobs))
        outcomes: list[GradeResult | Exception] = []
        for job in jobs:
            try:
                outcomes.append(grader.grade_many([job])[0])
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    # --- blocking variants for the CLI, where there is no event loop to protect ------------

    def _grade_reference_sync(
        self, question: str, reference: str, answer: str, lang: str | None
    ) -> GradeResult:
        return self.reference_grader().grade(question, reference, answer, lang)

    def grade_blocking(
        self, question: Question, answer: str, lang: str | None = None
    ) -> GradeResult:
        return self.grade_many_blocking([(question, answer, lang)])[0]

    def grade_many_blocking(self, jobs: list[Job]) -> list[GradeResult]:
        return self._executor.submit(lambda: self.grader().grade_many(jobs)).result()

    def grade_reference_blocking(
        self, question: str, reference: str, answer: str, lang: str | None = None
    ) -> GradeResult:
        return self._executor.submit(
            self._grade_reference_sync, question, reference, answer, lang
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
