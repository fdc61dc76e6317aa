"""The question bank: schema, cross-references and the questions the product promises."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from bot.content.loader import BankError, QuestionBank, load_bank
from bot.content.schema import Question

MINIMAL = {
    "id": "sample",
    "level": "junior",
    "topics": ["basics"],
    "question": {"ru": "Вопрос?", "en": "Question?"},
    "answer": {"ru": "Ответ.", "en": "Answer."},
    "key_points": [{"id": f"p{i}", "ru": f"Пункт {i}.", "en": f"Point {i}."} for i in range(3)],
    "pitfalls": [
        {
            "id": "wrong",
            "claim": {"ru": "Неверно.", "en": "Wrong."},
            "correction": {"ru": "Верно.", "en": "Right."},
        }
    ],
}


def test_bank_loads_with_unique_ids(bank: QuestionBank) -> None:
    assert len(bank) >= 12
    assert len({q.id for q in bank}) == len(bank)


def test_every_question_is_bilingual_and_complete(bank: QuestionBank) -> None:
    for q in bank:
        for text in (q.question, q.answer):
            assert text.ru.strip() and text.en.strip(), q.id
        assert 3 <= len(q.key_points) <= 7, q.id
        assert 1 <= len(q.pitfalls) <= 4, q.id
        for point in q.key_points:
            assert point.ru.strip() and point.en.strip(), (q.id, point.id)
        for pitfall in q.pitfalls:
            assert pitfall.claim.ru and pitfall.claim.en and pitfall.correction.ru, q.id
        assert all(bank.get(f) is not None for f in q.follow_ups), q.id


def test_promised_questions_are_in_the_bank(bank: QuestionBank) -> None:
    for question_id in ("pytorch-advantages", "train-vs-eval", "zero-grad", "autograd"):
        assert bank.get(question_id) is not None, question_id
    advantages = bank.get("pytorch-advantages")
    assert advantages is not None
    assert {p.id for p in advantages.pitfalls} == {
        "generic-convenience",
        "compile-is-free",
        "eval-equals-no-grad",
    }
    assert advantages.code and "backward()" in advantages.code


# The 41 questions of the seed interview list (seeds/002), in its order: the bank question each
# became, the level the seed gives, and whether the seed says it is asked almost always.
SEED_LIST = [
    ("autograd", "senior", True), ("dataloader", "junior", True), ("zero-grad", "junior", True),
    ("when-to-use-pytorch", "middle", True), ("save-load-weights", "middle", True),
    ("train-vs-eval", "junior", True), ("batch-norm", "middle", False),
    ("cpu-gpu-transfer", "junior", False), ("custom-loss", "middle", False),
    ("custom-module", "middle", False), ("dropout", "middle", False),
    ("dynamic-vs-static-graph", "middle", False), ("early-stopping", "middle", False),
    ("embedding", "middle", False), ("gradient-accumulation", "middle", False),
    ("gradient-clipping", "middle", False), ("verify-correctness", "senior", False),
    ("generalization-gap-debug", "senior", False), ("eager-vs-compiled-serving", "senior", False),
    ("silent-bug-abstractions", "middle", False), ("pytorch-vs-alternatives", "senior", False),
    ("pytorch-risks", "senior", False), ("notebook-to-production", "senior", False),
    ("tensor-vs-numpy", "junior", False), ("transfer-learning", "middle", False),
    ("mixed-precision", "senior", False), ("custom-dataset", "junior", False),
    ("dataparallel-vs-ddp", "senior", False), ("nan-loss-debug", "senior", False),
    ("gpu-memory-reduction", "senior", False), ("module-vs-functional", "junior", False),
    ("no-grad-vs-inference-mode", "senior", False), ("profiling", "senior", False),
    ("pytorch-project-story", "middle", False), ("fsdp", "senior", False),
    ("quantization", "middle", False), ("view-vs-reshape", "middle", False),
    ("attention", "middle", False), ("hooks", "middle", False), ("torch-compile", "senior", False),
    ("torchscript", "senior", False),
]  # fmt: skip
# Answer cards of seeds/004 that are questions of their own (the rest merged into SEED_LIST ones).
SEED_CARDS = [
    "what-is-pytorch", "distributed-training", "create-tensor", "conv2d", "maxpool2d",
    "tensor-shape", "lr-scheduler", "pruning", "knowledge-distillation", "onnx-export",
    "adam-optimizer", "torchserve", "custom-autograd-function",
]  # fmt: skip


def test_every_seed_question_is_in_the_bank_at_its_level(bank: QuestionBank) -> None:
    assert len(SEED_LIST) == 41 and len({i for i, _, _ in SEED_LIST}) == 41
    for question_id, level, always in SEED_LIST:
        question = bank.get(question_id)
        assert question is not None, question_id
        assert question.level == level, question_id
        assert (question.frequency == "always") == always, question_id
    for question_id in SEED_CARDS:
        assert bank.get(question_id) is not None, question_id
    seeded = {i for i, _, _ in SEED_LIST} | set(SEED_CARDS) | {"pytorch-advantages"}
    # Nothing missing; the bank has grown past the seeds (docs/writing-questions.md).
    assert seeded <= {q.id for q in bank}


def test_every_level_has_questions(bank: QuestionBank) -> None:
    for level in ("junior", "middle", "senior"):
        assert bank.by_level(level), level


def test_no_two_questions_are_near_duplicates(bank: QuestionBank, grader) -> None:
    questions = list(bank)
    vectors = grader.encoder.encode([q.question.en for q in questions])
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, 0)
    i, j = np.unravel_index(np.argmax(sims), sims.shape)
    assert sims[i, j] < 0.9, (questions[i].id, questions[j].id, float(sims[i, j]))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["question"].pop("ru"), "ru"),
        (lambda d: d.update(id="Bad_Id"), "kebab-case"),
        (lambda d: d.update(level="expert"), "level"),
        (lambda d: d["key_points"].append(dict(d["key_points"][0])), "duplicate key point"),
        (lambda d: d.update(key_points=d["key_points"][:2]), "at least 3"),
        (lambda d: d.update(pitfalls=[]), "at least 1"),
        (lambda d: d.update(surprise=1), "surprise"),
    ],
)
def test_schema_rejects_bad_questions(change, message: str) -> None:
    data = yaml.safe_load(yaml.safe_dump(MINIMAL))
    change(data)
    with pytest.raises(ValueError, match=message):
        Question.model_validate(data)


def test_loader_names_the_file_and_checks_follow_ups(tmp_path: Path) -> None:
    data = dict(MINIMAL, follow_ups=["missing-one"])
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    with pytest.raises(BankError, match="sample -> missing-one"):
        load_bank(tmp_path)
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(dict(MINIMAL, id="other")), "utf-8")
    with pytest.raises(BankError, match=r"sample\.yaml: id 'other' must match"):
        load_bank(tmp_path)
    (tmp_path / "sample.yaml").write_text("id: [unclosed", "utf-8")
    with pytest.raises(BankError, match=r"sample\.yaml: invalid YAML"):
        load_bank(tmp_path)


def test_content_hash_changes_with_content(tmp_path: Path) -> None:
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(MINIMAL, allow_unicode=True), "utf-8")
    first = load_bank(tmp_path).content_hash
    changed = dict(MINIMAL, answer={"ru": "Другой ответ.", "en": "Another answer."})
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(changed, allow_unicode=True), "utf-8")
    assert load_bank(tmp_path).content_hash != first
