"""Loads and cross-checks the question bank from a folder of YAML files."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from bot.content.schema import Level, Question

DEFAULT_BANK_DIR = Path(__file__).resolve().parents[2] / "content" / "pytorch"


class BankError(Exception):
    """The bank cannot be loaded; the message names the file and the problem."""


@dataclass(frozen=True)
class QuestionBank:
    questions: Mapping[str, Question]
    content_hash: str
    warnings: tuple[str, ...] = field(default=())

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions.values())

    def __len__(self) -> int:
        return len(self.questions)

    def get(self, question_id: str) -> Question | None:
        return self.questions.get(question_id)

    def by_level(self, level: Level | str) -> list[Question]:
        return [q for q in self.questions.values() if q.level == level]


def _load_file(path: Path) -> Question:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise BankError(f"{path.name}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise BankError(f"{path.name}: expected a mapping at the top level")
    try:
        question = Question.model_validate(data)
    except ValidationError as exc:
        raise BankError(f"{path.name}: {exc}") from exc
    if question.id != path.stem:
        raise BankError(f"{path.name}: id {question.id!r} must match the file name")
    return question


def load_bank(directory: Path = DEFAULT_BANK_DIR) -> QuestionBank:
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise BankError(f"no question files in {directory}")
    digest = hashlib.sha256()
    questions: dict[str, Question] = {}
    for path in files:
        question = _load_file(path)
        # The texts the grader embeds, not the file: editing a check keeps the stored vectors.
        texts = question.model_dump_json(exclude={"checks"})
        digest.update(path.name.encode() + b"\0" + texts.encode())
        if question.id in questions:
            raise BankError(f"{path.name}: duplicate question id {question.id!r}")
        questions[question.id] = question
    missing = [
        f"{q.id} -> {f}" for q in questions.values() for f in q.follow_ups if f not in questions
    ]
    if missing:
        raise BankError("follow-ups that name no question: " + "; ".join(missing))
    return QuestionBank(questions=questions, content_hash=digest.hexdigest()[:16])
