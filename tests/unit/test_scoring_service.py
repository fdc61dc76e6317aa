"""Micro-batching and the on-disk cache of bank vectors."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.__main__ import main
from bot.content.loader import QuestionBank
from bot.priority import bulk_work
from bot.scoring.encoder import Encoder
from bot.scoring.grade_result import GradeResult
from bot.scoring.grader import bank_texts
from bot.scoring.host_config import HostConfig
from bot.scoring.model_host import PREPARING, PREPARING_BACKGROUND, ModelHost
from bot.scoring.remote_encoder import server_arithmetic
from bot.scoring.service import ScoringService
from bot.scoring.vector_cache import ComputeLease, cache_file, load_vectors, save_vectors


async def test_concurrent_answers_are_graded_in_batches(
    scoring: ScoringService, bank: QuestionBank
) -> None:
    question = bank.questions["zero-grad"]
    answers = [
        f"zero_grad clears the gradients. Call it before backward, or they add up (try {i})."
        for i in range(24)
    ]
    before = len(scoring.batches)
    together = await asyncio.gather(*(scoring.grade(question, a, "en") for a in answers))
    sizes = list(scoring.batches)[before:]
    assert sum(sizes) == 24 and max(sizes) > 1  # not one model call per answer
    alone = [scoring.grade_blocking(question, a, "en") for a in answers[:3]]
    # Same grades whether an answer is graded alone or inside a batch.
    assert [r.score for r in together[:3]] == pytest.approx([r.score for r in alone], abs=0.1)
    assert [r.covered for r in together[:3]] == [r.covered for r in alone]


async def test_one_failing_answer_does_not_fail_the_batch(
    scoring: ScoringService, bank: QuestionBank
) -> None:
    question = bank.questions["zero-grad"]
    results = await asyncio.gather(
        scoring.grade(question, "zero_grad clears .grad", "en"),
        scoring.grade(None, "broken job", "en"),  # type: ignore[arg-type]
        return_exceptions=True,
    )
    assert not isinstance(results[0], BaseException) and results[0].score >= 0
    assert isinstance(results[1], BaseException)


def test_vector_cache_round_trip_and_keys(tmp_path: Path) -> None:
    path = cache_file(tmp_path, "bundled", "cpu", "abc")
    assert path != cache_file(tmp_path, "bundled", "cpu", "abd")  # bank changed
    assert path != cache_file(tmp_path, "other-model", "cpu", "abc")
    vectors = {"a": np.ones(4, np.float32), "b": np.zeros(4, np.float32)}
    save_vectors(path, vectors)
    loaded = load_vectors(path)
    assert set(loaded) == {"a", "b"} and np.array_equal(loaded["a"], vectors["a"])
    path.write_bytes(b"not a zip")
    assert load_vectors(path) == {}  # a damaged cache is ignored, not fatal


def test_a_new_bank_version_computes_only_its_new_texts(
    tmp_path: Path, bank: QuestionBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a bank edit the cache file is a new one, but the texts that did not change take
    their vectors from the same model's file for the earlier version: a deployment whose bank
    changed starts almost warm. Texts of questions no longer in the bank are not carried."""
    before = QuestionBank({i: bank.questions[i] for i in ("zero-grad", "autograd")}, "v1")
    after = QuestionBank({i: bank.questions[i] for i in ("zero-grad", "train-vs-eval")}, "v2")
    config = HostConfig("bundled", "cpu", cache_dir=tmp_path)
    ModelHost(before, config).load(warm=True)
    computed: list[str] = []
    forward = Encoder._forward

    def recording(self: Encoder, inputs: list[str], *args: Any) -> np.ndarray:
        computed.extend(inputs)
        return forward(self, inputs, *args)

    monkeypatch.setattr(Encoder, "_forward", recording)
    host = ModelHost(after, config)
    host.load(warm=True)
    new_texts = bank_texts([bank.questions["train-vs-eval"]]) - bank_texts(before)
    assert {text.removeprefix(host.grader().encoder.prefix) for text in computed} == new_texts
    stored = load_vectors(host.cache_path())
    assert set(stored) == bank_texts(after)  # autograd's texts left behind with v1
    question = after.questions["zero-grad"]
    fresh = ModelHost(after, HostConfig("bundled", "cpu", cache_dir=tmp_path / "fresh"))
    job = [(question, "zero_grad clears .grad because backward adds to it.", "en")]
    assert host.grade_many(job)[0].score == fresh.warm_grader().grade_many(job)[0].score


def test_restart_reads_bank_vectors_from_disk(
    tmp_path: Path, bank: QuestionBank, capfd: pytest.CaptureFixture[str]
) -> None:
    ids = ("zero-grad", "train-vs-eval", "autograd")
    bank = QuestionBank({i: bank.questions[i] for i in ids}, content_hash="three")
    first = ScoringService(bank, HostConfig("bundled", "cpu", cache_dir=tmp_path))
    first.host.load(warm=True)
    first.close()
    cold = capfd.readouterr().err  # the first run says what it is doing, with a progress bar
    # The bar counts the three questions' texts (wording, model answer, points, claims, ru + en).
    done = re.search(r"question bank: 100%\|[^|]*\| (\d+)/(\d+) ", cold)
    assert PREPARING in cold and done and done[1] == done[2] and int(done[1]) > 20, cold
    files = list(tmp_path.glob("bank-vectors-*.npz"))
    assert files == [first.cache_path()]
    second = ScoringService(bank, HostConfig("bundled", "cpu", cache_dir=tmp_path))
    grader = second.host.load(warm=True)  # warm: everything must come from the file
    question = bank.questions["zero-grad"]
    assert question.key_points[0].en in grader.encoder.remembered()
    second.close()
    warm = capfd.readouterr().err
    assert PREPARING not in warm and "question bank:" not in warm, warm  # nothing when warm


async def test_a_cold_bot_grades_before_the_whole_bank_is_computed(
    tmp_path: Path, bank: QuestionBank, capfd: pytest.CaptureFixture[str]
) -> None:
    """With no stored vectors the bot computes the calibration, grades at once, and computes
    the rest of the bank between grades; the grades are those of a full warm-up, and the
    vectors are stored when all are there."""
    ids = ("zero-grad", "train-vs-eval", "autograd")
    small = QuestionBank({i: bank.questions[i] for i in ids}, content_hash="three")
    full = ScoringService(small, HostConfig("bundled", "cpu", cache_dir=tmp_path / "full"))
    full.host.load(warm=True)
    service = ScoringService(
        small, HostConfig("bundled", "cpu", cache_dir=tmp_path / "lazy", background_warm=True)
    )
    await service.start(warm=True)
    assert not service.grader()._vectors  # only the calibration so far
    assert PREPARING_BACKGROUND in capfd.readouterr().err
    question = small.questions["train-vs-eval"]
    answer = "model.eval() turns off gradient computation; train() turns dropout on."
    graded = await service.grade(question, answer, "en")
    expected = full.grade_blocking(question, answer, "en")
    assert (graded.score, graded.covered, [p.id for p in graded.pitfalls]) == (
        expected.score,
        expected.covered,
        [p.id for p in expected.pitfalls],
    )
    await service.warmed()
    path = service.cache_path()
    assert path is not None and set(load_vectors(path)) == set(full.grader().encoder.remembered())
    service.close()
    full.close()


def test_warm_cache_computes_once(tmp_path: Path, bank: QuestionBank) -> None:
    bank = QuestionBank({"zero-grad": bank.questions["zero-grad"]}, content_hash="one")
    first = ScoringService(bank, HostConfig("bundled", "cpu", cache_dir=tmp_path / "cache"))
    path, computed = first.warm_cache()
    first.close()
    assert computed and path.exists() and path.parent == tmp_path / "cache"
    second = ScoringService(bank, HostConfig("bundled", "cpu", cache_dir=tmp_path / "cache"))
    assert second.warm_cache() == (path, False)
    assert second.host._grader is None  # stored already: the model was not even loaded
    second.close()
    with pytest.raises(ValueError):
        ScoringService(bank, HostConfig("bundled", "cpu")).warm_cache()  # no cache directory


def test_cli_warm_says_where_the_vectors_are(
    scoring: ScoringService,
    vector_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("EMBEDDING_DEVICE", "cpu")
    monkeypatch.setenv("EMBEDDING_MODEL", "bundled")
    monkeypatch.setenv("EMBEDDING_CACHE_DIR", str(vector_cache))
    assert main(["warm"]) == 0  # the session's `scoring` stored them: nothing to compute
    out = capsys.readouterr().out.strip()
    assert out == f"question bank vectors already in {scoring.cache_path()}"


class _OrderedGrader:
    """Records the order answers reach the model; the first batch waits for `release`."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.release = threading.Event()

    def grade_many(self, jobs: list[tuple[object, str, str | None]]) -> list[GradeResult]:
        self.release.wait(timeout=30)
        self.order += [answer for _, answer, _ in jobs]
        return [GradeResult("q", "en", 5.0, "partial") for _ in jobs]


async def test_a_private_answer_is_graded_before_queued_bulk_work(bank: QuestionBank) -> None:
    """A person waiting in a private chat goes ahead of a group round's batch queued earlier;
    within one priority, arrival order holds."""
    service = ScoringService(bank, HostConfig("bundled", "cpu"), max_batch=2)
    fake = _OrderedGrader()
    service.host._grader = fake  # type: ignore[assignment]
    question = bank.questions["zero-grad"]
    first = asyncio.create_task(service.grade(question, "in flight", "en"))
    while not service.batches:  # the worker holds the first batch until released
        await asyncio.sleep(0.01)

    async def bulk() -> list[GradeResult]:
        with bulk_work():
            return await asyncio.gather(
                *(service.grade(question, f"group {i}", "en") for i in range(3))
            )

    group = asyncio.create_task(bulk())
    await asyncio.sleep(0)
    private = [asyncio.create_task(service.grade(question, f"private {i}", "en")) for i in (1, 2)]
    await asyncio.sleep(0)
    fake.release.set()
    await asyncio.gather(first, group, *private)
    assert fake.order == ["in flight", "private 1", "private 2", "group 0", "group 1", "group 2"]
    service.close()


async def test_grading_process_grades_as_the_thread_does(
    scoring: ScoringService, bank: QuestionBank, vector_cache: Path
) -> None:
    """GRADER_WORKER=process: the model in a child process (its own GIL) gives the same grades,
    batches answers the same way, and goes away with close()."""
    service = ScoringService(
        bank, HostConfig("bundled", "cpu", cache_dir=vector_cache, threads=1), worker="process"
    )
    await service.start(warm=True)
    question = bank.questions["zero-grad"]
    answers = [
        "zero_grad clears .grad; without it gradients from several backward calls add up.",
        "optimizer.step updates the weights",
        "не знаю",
    ]
    together = await asyncio.gather(*(service.grade(question, a, "en") for a in answers))
    alone = [scoring.grade_blocking(question, a, "en") for a in answers]
    assert [r.score for r in together] == pytest.approx([r.score for r in alone], abs=0.1)
    assert [r.covered for r in together] == [r.covered for r in alone]
    assert max(service.batches) > 1 and await service.describe() == (
        "cpu",
        alone_precision(scoring),
    )
    assert service._pool is not None
    workers = list(service._pool._processes)  # type: ignore[attr-defined]
    assert workers and os.getpid() not in workers
    service.close()
    for _ in range(600):  # the worker exits once the pool is shut down
        if not any(Path(f"/proc/{pid}").exists() for pid in workers):
            break
        await asyncio.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)


def alone_precision(service: ScoringService) -> str:
    return service.grader().encoder.precision


async def test_a_killed_grading_process_is_replaced(bank: QuestionBank, vector_cache: Path) -> None:
    """The grading process killed (out of memory, say): the next answer is graded by a new one,
    not failed."""
    small = QuestionBank({"zero-grad": bank.questions["zero-grad"]}, content_hash="one")
    service = ScoringService(
        small, HostConfig("bundled", "cpu", cache_dir=vector_cache), worker="process"
    )
    await service.start(warm=True)
    question = small.questions["zero-grad"]
    answer = "zero_grad clears .grad before the next backward."
    first = await service.grade(question, answer, "en")
    assert service._pool is not None
    (worker,) = list(service._pool._processes)  # type: ignore[attr-defined]
    os.kill(worker, signal.SIGKILL)
    again = await service.grade(question, answer, "en")
    assert again.score == pytest.approx(first.score, abs=0.1)
    assert worker not in list(service._pool._processes)  # type: ignore[attr-defined]
    service.close()


def test_replicas_sharing_a_cache_dir_compute_the_bank_once(
    tmp_path: Path, bank: QuestionBank
) -> None:
    """Two cold hosts on one EMBEDDING_CACHE_DIR (replicas on a shared volume): the first takes
    the file's lease and computes the bank; the second computes nothing while it waits, then
    adopts the file and grades as the first does."""
    ids = ("zero-grad", "train-vs-eval")
    small = QuestionBank({i: bank.questions[i] for i in ids}, content_hash="two-shared")
    config = HostConfig("bundled", "cpu", cache_dir=tmp_path, background_warm=True)
    first, second = ModelHost(small, config), ModelHost(small, config)
    assert first.warm_up(True) and first.warm_step()  # holds the lease, one question done
    assert second.warm_up(True)
    before = set(second.grader().encoder.remembered())  # the calibration only
    assert second.warm_step()  # the lease is held: it waits
    assert set(second.grader().encoder.remembered()) == before
    while first.warm_step():
        pass
    assert not second.warm_step()  # the file is there: adopted
    assert set(second.grader().encoder.remembered()) >= set(load_vectors(first.cache_path()))
    question = small.questions["train-vs-eval"]
    answer = "eval() switches dropout off and batch norm to its running statistics."
    job = [(question, answer, "en")]
    assert second.grade_many(job)[0].score == first.grade_many(job)[0].score


def test_questions_just_asked_are_computed_before_the_rest_of_the_bank(
    tmp_path: Path, bank: QuestionBank
) -> None:
    """On a cold start the bank is computed a question at a time; the questions just asked (an
    interview's, a round's) come first, so that their answers find the vectors ready. A replica
    waiting for another's file computes those too, and nothing else."""
    ids = ("zero-grad", "train-vs-eval", "autograd")
    small = QuestionBank({i: bank.questions[i] for i in ids}, content_hash="three-asked")
    config = HostConfig("bundled", "cpu", cache_dir=tmp_path, background_warm=True)
    first, second = ModelHost(small, config), ModelHost(small, config)
    assert first.warm_up(True) and first.warm_step(["autograd"])
    assert set(first.grader()._vectors) == {"autograd"}  # the bank's order would be zero-grad
    assert second.warm_up(True) and second.warm_step(["train-vs-eval"])  # first holds the lease
    assert set(second.grader()._vectors) == {"train-vs-eval"}
    assert second.warm_step()  # nothing more was asked: it waits for the file
    assert set(second.grader()._vectors) == {"train-vs-eval"}


def test_a_killed_holder_releases_the_bank_lease(tmp_path: Path) -> None:
    """The lease is the operating system's lock: a holder killed with SIGKILL leaves nothing
    behind that blocks the next one."""
    path = tmp_path / "bank-vectors-x.npz"
    script = (
        "import sys, time; from filelock import FileLock; "
        "lock = FileLock(sys.argv[1] + '.lock', thread_local=False); lock.acquire(); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lease = ComputeLease(path)
        assert not lease.take()
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        assert lease.take()
        lease.release()
    finally:
        holder.kill()


def test_a_remote_server_shares_the_in_process_file_only_when_it_computes_the_same() -> None:
    ours = {"model_id": "bundled", "device": "cpu", "model_dtype": "fp32"}
    assert server_arithmetic(ours, "bundled") == "cpu/fp32"  # `embed-server`: the same vectors
    tei = {"model_id": "intfloat/multilingual-e5-small", "model_dtype": "float16"}
    assert server_arithmetic(tei, "intfloat/multilingual-e5-small") == (
        "remote:intfloat/multilingual-e5-small/float16"
    )
    assert server_arithmetic(ours, "other") == "remote:bundled/fp32"
    assert server_arithmetic({}, "bundled") == "remote:unknown/unknown"
