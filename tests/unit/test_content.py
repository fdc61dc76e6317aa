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
