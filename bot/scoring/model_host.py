"""The model host: the embedding model, the pair models and the bank's vectors, loaded once
where they run (the service's worker thread, or the grading process: bot/scoring/worker.py),
and every synchronous call made there. The queue in front of it is bot/scoring/service.py."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.scoring.device import resolve_device, resolve_precision
from bot.scoring.encoder import Encoder
from bot.scoring.grade_result import GradeResult
from bot.scoring.grader import Grader, bank_texts
from bot.scoring.host_config import HostConfig
from bot.scoring.options import GraderOptions
from bot.scoring.reference import ReferenceGrader
from bot.scoring.relevance_net.model import load_relevance_model
from bot.scoring.remote_encoder import RemoteEncoder
from bot.scoring.stance.model import load_stance_model
from bot.scoring.vector_cache import (
    ComputeLease,
    cache_file,
    earlier_vectors,
    load_vectors,
    save_vectors,
)

log = logging.getLogger(__name__)

PREPARING = "preparing the question bank (first run only)…"
PREPARING_BACKGROUND = (
    "preparing the question bank (first run only): grading starts now, the rest of the bank "
    "is computed between answers"
)

Job = tuple[Question, str, str | None]

# How long a replica that waits for another's bank file sleeps between looks (in the grading
# worker, between answers: an answer arriving meanwhile waits at most this long).
WAIT_FOR_BANK = 0.25


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


class ModelHost:
    """Loads lazily, on the first call that needs the grader; not thread-safe: one thread (or
    the grading process's one worker) calls it."""

    def __init__(self, bank: QuestionBank, config: HostConfig):
        """`config`: the same value the service holds and the grading process is sent."""
        self.bank = bank
        self.config = config
        self._grader: Grader | None = None
        self._reference: ReferenceGrader | None = None
        self._unwarmed: list[Question] = []  # bank questions whose vectors are not computed yet
        self._asked: set[str] = set()  # questions asked meanwhile (`warm_step`'s `wanted`)
        self._path: Path | None = None  # the bank's file for the loaded encoder
        self._lease: ComputeLease | None = None  # while this host computes the bank's file

    def cache_path(self, device: str | None = None) -> Path | None:
        """The file of the bank's vectors for this model, device and bank; None: no cache."""
        config = self.config
        if config.cache_dir is None:
            return None
        device = device or resolve_device(config.device)
        # bf16 and fp16 vectors differ from fp32 ones in the fourth decimal: not shared.
        arithmetic = f"{device}/{resolve_precision(config.precision, device)}"
        return self._file(arithmetic)

    def _file(self, arithmetic: str) -> Path | None:
        if self.config.cache_dir is None:
            return None
        return cache_file(self.config.cache_dir, self.config.model, arithmetic,
                          self.bank.content_hash)  # fmt: skip

    def load(self, warm: bool) -> Grader:
        if self._grader is None:
            config = self.config
            # Loading and the bank's warm-up come before the bot serves anyone: every core.
            set_cpu_threads(None if config.threads is None else os.cpu_count() or 1)
            encoder: Encoder
            if config.embeddings_url:
                remote = RemoteEncoder(config.embeddings_url, config.model)
                # Replicas sharing EMBEDDING_CACHE_DIR share the file (the embed-server's vectors
                # are an in-process encoder's, so its file is the same one too).
                path = self._file(remote.served_as)
                encoder = remote
                stance_device = resolve_device(config.device)
                stance_precision = resolve_precision(config.precision, stance_device)
            else:
                encoder = Encoder(
                    config.model,
                    config.device,
                    model_cache_dir=config.model_cache_dir,
                    precision=config.precision,
                )
                path = self.cache_path(encoder.device)
                stance_device = encoder.device
                stance_precision = encoder.precision
            cold = False
            if path is not None:
                stored = load_vectors(path)
                cold = not stored
                if cold:  # a new bank version: what did not change is not computed again
                    stored = earlier_vectors(path, bank_texts(self.bank))
                    if stored:
                        log.info("%d texts' vectors from an earlier bank version", len(stored))
                encoder.remember(stored)
            cached = len(encoder.remembered())
            # The pair models run where the encoder does (or, with a remote encoder, where it
            # would), each only where it was trained from this embedding model.
            options = config.options or GraderOptions()
            where = (config.model, None, config.model_cache_dir, stance_device, stance_precision)
            stance = load_stance_model(*where) if options.stance else None
            relevance = load_relevance_model(*where) if options.relevance else None
            grader = Grader(encoder, list(self.bank), config.options, stance, relevance)
            self._path = path
            if warm and cold and config.background_warm:
                # Every grade needs the calibration (all key points, about a quarter of the
                # bank); the rest follows a question at a time (`warm_step`), by one replica:
                # the others wait for its file.
                print(PREPARING_BACKGROUND, file=sys.stderr, flush=True)
                grader.baseline()
                self._unwarmed = list(self.bank)
                self._lease = ComputeLease(path) if path is not None else None
            elif warm:
                if cold:  # tens of seconds on a CPU, once: say so rather than sit silent
                    print(PREPARING, file=sys.stderr, flush=True)
                grader.warm(list(self.bank), progress=cold)
                grader.baseline()
                if path is not None and len(encoder.remembered()) > cached:
                    save_vectors(path, encoder.remembered())
            set_cpu_threads(config.threads)
            self._grader = grader
        return self._grader

    def grader(self) -> Grader:
        return self.load(warm=False)

    def warm_grader(self) -> Grader:
        """The grader with the bank's vectors loaded (from the cache file, else computed and
        stored): for the CLI tools that grade many answers in this thread."""
        return self.load(warm=True)

    def reference_grader(self) -> ReferenceGrader:
        if self._reference is None:
            self._reference = ReferenceGrader(self.grader().encoder, list(self.bank))
        return self._reference

    def warm_up(self, warm: bool) -> bool:
        """Load; True when part of the bank is left for `warm_step`."""
        self.load(warm)
        return bool(self._unwarmed)

    def warm_step(self, wanted: Sequence[str] = ()) -> bool:
        """The vectors of the next bank question not computed yet (first those of `wanted`, the
        questions just asked, in order); when none is left, store them all. True while more
        remain. Only the holder of the file's lease computes the rest of the bank: another
        replica computes only what it was asked for, waits (WAIT_FOR_BANK) and adopts the file
        once it is written, or takes the lease over if its holder died."""
        grader = self.grader()
        path, lease = self._path, self._lease
        self._put_first(wanted)
        if self._unwarmed and lease is not None and not lease.holds():
            # Another replica's file is adopted, never recomputed; looked for again once the
            # lease is ours, since its holder may have written it and let go just before.
            waiting = not lease.take()
            stored = load_vectors(path) if path is not None else {}
            if stored:
                lease.release()
                grader.encoder.remember(stored)
                grader.warm(self._unwarmed)  # from the adopted vectors: no model pass
                self._unwarmed, self._lease = [], None
                log.info("question bank ready: %d texts' vectors from %s", len(stored), path)
                return False
            if waiting:
                asked = [q for q in self._unwarmed if q.id in self._asked]
                if asked:  # needed in seconds: computed here rather than waited for
                    grader.warm(asked[:1])
                    self._unwarmed.remove(asked[0])
                else:
                    time.sleep(WAIT_FOR_BANK)
                return True
        if self._unwarmed:
            grader.warm([self._unwarmed.pop(0)])
        if self._unwarmed:
            return True
        vectors = grader.encoder.remembered()  # a copy, taken under the encoder's lock: once
        if path is not None:
            save_vectors(path, vectors)
        if lease is not None:
            lease.release()
            self._lease = None
        log.info("question bank ready: %d texts' vectors", len(vectors))
        return False

    def _put_first(self, wanted: Sequence[str]) -> None:
        """Move the not yet computed questions among `wanted` to the front, in that order."""
        self._asked.update(wanted)
        if not wanted or not self._unwarmed:
            return
        order = {question_id: i for i, question_id in enumerate(dict.fromkeys(wanted))}
        first = sorted((q for q in self._unwarmed if q.id in order), key=lambda q: order[q.id])
        if first:
            rest = [q for q in self._unwarmed if q.id not in order]
            self._unwarmed = first + rest

    def describe(self) -> tuple[str, str]:
        encoder = self.grader().encoder
        return encoder.device, encoder.precision

    def seconds_without_model(self, jobs: Sequence[Job]) -> float:
        return self.grader().seconds_without_model(jobs)

    def peak_rss_mib(self) -> float:
        return peak_rss_mib()

    def gpu_peak_mib(self) -> float:
        import torch

        return float(torch.cuda.max_memory_allocated() / 2**20)

    def grade_many(self, jobs: list[Job]) -> list[GradeResult]:
        return self.grader().grade_many(jobs)

    def grade_many_safe(self, jobs: list[Job]) -> list[GradeResult | Exception]:
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

    def grade_reference(
        self, question: str, reference: str, answer: str, lang: str | None
    ) -> GradeResult:
        return self.reference_grader().grade(question, reference, answer, lang)
