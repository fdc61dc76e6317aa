"""Micro-batching and the on-disk cache of bank vectors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.scoring.vector_cache import cache_file, load_vectors, save_vectors


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


def test_restart_reads_bank_vectors_from_disk(tmp_path: Path, bank: QuestionBank) -> None:
    ids = ("zero-grad", "train-vs-eval", "autograd")
    bank = QuestionBank({i: bank.questions[i] for i in ids}, content_hash="three")
    first = ScoringService(bank, "bundled", "cpu", cache_dir=tmp_path)
    first._load(warm=True)
    first.close()
    files = list(tmp_path.glob("bank-vectors-*.npz"))
    assert len(files) == 1
    second = ScoringService(bank, "bundled", "cpu", cache_dir=tmp_path)
    grader = second._load(warm=False)  # no warm-up: everything must come from the file
    question = bank.questions["zero-grad"]
    assert question.key_points[0].en in grader.encoder.remembered()
    second.close()
