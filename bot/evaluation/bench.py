"""`python -m bot bench`: how fast grading is, measured, with the baseline in the same run.

Prints single-answer latency (p50/p95), throughput at 1, 8 and 64 concurrent answers (or the
levels of `--concurrency`), micro-batched against one-at-a-time at the widest level (the ratio),
how long the event loop stalls meanwhile, what grading costs besides the model (the ceiling of
one grading process, however fast the device), start-up time to the first graded answer (cold,
then with the on-disk vector cache) and peak memory; `--json` also writes them to a file.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.evaluation.datasets import load_bank_eval
from bot.scoring.host_config import HostConfig
from bot.scoring.model_host import peak_rss_mib
from bot.scoring.service import ScoringService, grader_options

Job = tuple[Question, str, str]


def _jobs(settings: Settings, bank: QuestionBank) -> list[Job]:
    dataset = load_bank_eval(settings.content_dir.parent / "eval")
    return [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in dataset.samples]


def _service(settings: Settings, bank: QuestionBank, cache: Path, max_batch: int) -> ScoringService:
    config = HostConfig(
        settings.embedding_model,
        settings.embedding_device,
        cache_dir=cache,
        options=grader_options(settings),
        model_cache_dir=settings.model_cache_dir,
        precision=settings.embedding_precision,
        threads=settings.grader_threads,
        background_warm=True,
    )
    # The grading process (or thread) as the bot runs it.
    return ScoringService(bank, config, max_batch, worker=settings.grader_worker)


async def _startup(settings: Settings, bank: QuestionBank, cache: Path, job: Job) -> float:
    started = time.perf_counter()
    service = _service(settings, bank, cache, 64)
    await service.start(warm=True)
    await service.grade(*job)
    took = time.perf_counter() - started
    await service.warmed()  # a cold start stores the bank's vectors once it has them all
    service.close()
    return took


async def _latencies(service: ScoringService, jobs: list[Job]) -> list[float]:
    result = []
    for job in jobs:
        started = time.perf_counter()
        await service.grade(*job)
        result.append(1000 * (time.perf_counter() - started))
    return result


async def _throughput(service: ScoringService, jobs: list[Job], concurrency: int) -> float:
    """Answers/s when `concurrency` answers are always in flight."""
    queue = list(jobs)

    async def worker() -> None:
        while queue:
            await service.grade(*queue.pop())

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(jobs) / (time.perf_counter() - started)


async def _loop_stall(service: ScoringService, jobs: list[Job]) -> tuple[float, float]:
    """(worst event-loop delay in ms, seconds to grade) while `jobs` are graded at once."""
    worst = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal worst
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            worst = max(worst, 1000 * (time.perf_counter() - before - 0.005))

    tick = asyncio.create_task(ticker())
    started = time.perf_counter()
    await asyncio.gather(*(service.grade(*job) for job in jobs))
    took = time.perf_counter() - started
    done.set()
    await tick
    return worst, took


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def _bench(
    settings: Settings, bank: QuestionBank, answers: int, concurrency: tuple[int, ...]
) -> dict[str, object]:
    jobs = _jobs(settings, bank)
    figures: dict[str, object] = {"model": settings.embedding_model}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        cold = await _startup(settings, bank, cache, jobs[0])
        warm_start = await _startup(settings, bank, cache, jobs[0])
        # One model in the process: a second one's idle threads slow the first by a third.
        batched = _service(settings, bank, cache, settings.grader_max_batch)
        await batched.start(warm=True)
        device, precision = await batched.describe()
        figures |= {"device": device, "precision": precision, "worker": settings.grader_worker}
        print(
            f"model: {settings.embedding_model} on {device} ({precision}), "
            f"{settings.grader_worker} worker; "
            f"{answers} answers per run; whole-answer pass "
            f"{'on' if settings.grader_whole_answer_pass else 'off'}"
            f"{'; one pass' if settings.grader_one_pass else ''}"
        )
        print(
            f"start-up to first graded answer: cold {cold:.1f} s, with vector cache "
            f"{warm_start:.1f} s"
        )
        figures |= {"startup_cold_s": cold, "startup_cached_s": warm_start}
        await _latencies(batched, jobs[:8])  # warm-up: first calls allocate
        latencies = await _latencies(batched, jobs[:60])
        p50, p95 = _percentile(latencies, 50), _percentile(latencies, 95)
        print(f"single answer latency: p50 {p50:.0f} ms, p95 {p95:.0f} ms (n={len(latencies)})")
        figures |= {"single_p50_ms": p50, "single_p95_ms": p95}
        sample = (jobs * (1 + answers // len(jobs)))[:answers]
        rates: dict[int, float] = {}
        for level in concurrency:
            rates[level] = await _throughput(batched, sample, level)
            print(f"throughput at {level:4d} concurrent: {rates[level]:7.1f} answers/s (batched)")
        figures["throughput"] = rates
        widest = max(concurrency)
        together = await _throughput(batched, sample, widest)
        limit = batched.max_batch
        batched.max_batch = 1  # the same model, one answer per pass
        alone = await _throughput(batched, sample, widest)
        batched.max_batch = limit
        print(
            f"{widest} concurrent: batched {together:.1f}/s vs one at a time {alone:.1f}/s "
            f"= {together / alone:.2f}x"
        )
        figures |= {"batching_ratio": together / alone}
        stall, took = await _loop_stall(batched, sample[:widest])
        print(
            f"event loop while {widest} answers are graded ({took:.1f} s): "
            f"worst delay {stall:.1f} ms"
        )
        figures["loop_stall_ms"] = stall
        cpu_s = min([await batched.seconds_without_model(sample) for _ in range(3)])
        print(
            f"grading without the model (vectors computed first): {1000 * cpu_s / len(sample):.2f}"
            f" ms an answer, {len(sample) / cpu_s:.0f} answers/s: the ceiling of one grading "
            "process on any device"
        )
        figures |= {
            "without_model_ms": 1000 * cpu_s / len(sample),
            "without_model_per_s": len(sample) / cpu_s,
        }
        print(
            f"batch sizes seen: max {max(batched.batches)}, "
            f"mean {statistics.mean(batched.batches):.1f}"
        )
        extra = ""
        model_rss = await batched.peak_rss_mib()
        figures["peak_rss_mib"] = max(model_rss, peak_rss_mib())
        if device.startswith("cuda"):
            figures["gpu_peak_mib"] = await batched.gpu_peak_mib()
            extra = f", GPU peak {figures['gpu_peak_mib']:.0f} MiB"
        where = (
            f"grading process {model_rss:.0f} MiB, bot process {peak_rss_mib():.0f} MiB"
            if settings.grader_worker == "process"
            else f"{peak_rss_mib():.0f} MiB"
        )
        print(f"peak memory resident: {where}{extra}")
        batched.close()
    return figures


def run_bench(
    settings: Settings,
    bank: QuestionBank,
    answers: int,
    model: str | None = None,
    concurrency: tuple[int, ...] = (1, 8, 64),
    json_path: Path | None = None,
) -> int:
    if model:
        settings = settings.model_copy(update={"embedding_model": model})
    figures = asyncio.run(_bench(settings, bank, max(8, answers), concurrency))
    if json_path is not None:
        json_path.write_text(json.dumps(figures, indent=2), "utf-8")
    return 0
