"""Stance examples (content/stance/<question>.yaml): training data for the stance model.

For every pitfall of the bank, sentences in Russian and English that assert it, that reject it,
and that mention its subject without taking a side. They are written for training only, by
writers who saw the bank and no labelled answer set (content/stance/README.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError

from bot.content.loader import QuestionBank
from bot.content.schema import LANGUAGES, Strict

DEFAULT_STANCE_DIR = Path(__file__).resolve().parents[2] / "content" / "stance"
# Rejections written for the two kinds the model misread as assertions (content/stance/README.md):
# <question>.yaml files in this subfolder, merged into the question's stance file when asked for.
# Trained with them, the model flagged less well on the threshold sets (docs/grading.md, fifteenth
# attempt), so `train stance` leaves them out unless given --corrections; `content check` reads
# them.
CORRECTIONS_DIR = "corrections"
# Sentences of real labelled answers (scripts/stance_answer_sentences.py).
ANSWERS_FILE = "answers.jsonl"
# The labelled answer sets whose sentences may train the stance model: the tuning sets, and the
# blind sets once read for their published figure, but for those the thresholds are chosen on
# (bot/evaluation/stance_thresholds.py: content/blind, blind8, blind10, blind13 to blind21).
# Never a blind set not read yet.
ANSWER_SOURCES = (
    "eval",
    "heldout",
    "blind2",
    "blind3",
    "blind4",
    "blind5",
    "blind6",
    "blind7",
    "blind9",
    "blind11",
    "blind12",
    "blind22",
    "blind23",
    "blind24",
    "blind25",
    "blind26",
)
LABELS = ("asserts", "rejects", "neither")
# The fewest examples of each label, per pitfall and language, that `content check` accepts.
MINIMUM = {"asserts": 4, "rejects": 4, "neither": 2}

_NOT_WORD = re.compile(r"[^\w]+")


class StanceError(Exception):
    """A stance file cannot be read; the message names the file and the problem."""


class Examples(Strict):
    ru: tuple[str, ...] = Field(default=())
    en: tuple[str, ...] = Field(default=())

    def get(self, lang: str) -> tuple[str, ...]:
        return self.ru if lang == "ru" else self.en


class PitfallCorrections(Strict):
    """Rejections of one pitfall: `plain` states the fact in the claim's own terms with no
    "myth" or "people think"; `reported` gives the claim as others' belief, the correction left
    to the next sentence."""

    id: str
    plain: Examples = Field(default_factory=Examples)
    reported: Examples = Field(default_factory=Examples)


class PitfallStance(PitfallCorrections):
    asserts: Examples
    rejects: Examples
    neither: Examples

    def examples(self, label: str) -> Examples:
        return {"asserts": self.asserts, "rejects": self.rejects, "neither": self.neither}[label]


class StanceFile(Strict):
    question: str
    pitfalls: tuple[PitfallStance, ...]


class CorrectionsFile(Strict):
    question: str
    pitfalls: tuple[PitfallCorrections, ...]


class AnswerSentence(Strict):
    """A sentence of a labelled answer of one of ANSWER_SOURCES, with its stance on one pitfall
    of its question."""

    question: str
    pitfall: str
    lang: Literal["ru", "en"]
    label: Literal["asserts", "rejects", "neither"]
    text: str
    source: str  # the answer set it comes from


def load_answer_sentences(directory: Path = DEFAULT_STANCE_DIR) -> list[AnswerSentence]:
    """The folder's answers.jsonl, or nothing where it has none."""
    path = directory / ANSWERS_FILE
    if not path.exists():
        return []
    rows: list[AnswerSentence] = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        try:
            rows.append(AnswerSentence.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise StanceError(f"{ANSWERS_FILE}:{number}: {exc}") from exc
    return rows


def _read(path: Path, model: type[StanceFile] | type[CorrectionsFile]) -> Any:
    try:
        loaded = model.model_validate(yaml.safe_load(path.read_text("utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        raise StanceError(f"{path.name}: {exc}") from exc
    if loaded.question != path.stem:
        raise StanceError(f"{path.name}: question {loaded.question!r} must match the name")
    return loaded


def load_stance(
    directory: Path = DEFAULT_STANCE_DIR, corrections: bool = False
) -> dict[str, StanceFile]:
    """Every stance file of the folder, by question id; with `corrections`, its corrections
    file merged in."""
    result: dict[str, StanceFile] = {}
    for path in sorted(directory.glob("*.yaml")):
        stance: StanceFile = _read(path, StanceFile)
        result[stance.question] = stance
    if not corrections:
        return result
    for path in sorted((directory / CORRECTIONS_DIR).glob("*.yaml")):
        written: CorrectionsFile = _read(path, CorrectionsFile)
        where = f"{CORRECTIONS_DIR}/{path.name}"
        if written.question not in result:
            raise StanceError(f"{where}: no stance file for {written.question!r}")
        stance = result[written.question]
        extra = {c.id: c for c in written.pitfalls}
        if unknown := sorted(set(extra) - {p.id for p in stance.pitfalls}):
            raise StanceError(f"{where}: no stance examples for pitfall {unknown[0]!r}")
        merged = tuple(
            p.model_copy(update={"plain": extra[p.id].plain, "reported": extra[p.id].reported})
            if p.id in extra
            else p
            for p in stance.pitfalls
        )
        result[stance.question] = stance.model_copy(update={"pitfalls": merged})
    return result


def _plain(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def stance_problems(bank: QuestionBank, stance: dict[str, StanceFile]) -> list[str]:
    """What keeps the stance data from covering the bank: a pitfall without its minimum of
    examples per label and language, an id the bank does not have, an assertion that copies its
    claim word for word (the model would learn the claim, not the stance)."""
    problems: list[str] = []
    for question_id in sorted(set(stance) - set(bank.questions)):
        problems.append(f"stance/{question_id}.yaml: no such question in the bank")
    for question in bank:
        written = {p.id: p for p in stance[question.id].pitfalls} if question.id in stance else {}
        for unknown in sorted(set(written) - {p.id for p in question.pitfalls}):
            problems.append(f"stance/{question.id}.yaml: no pitfall {unknown} in the question")
        for pitfall in question.pitfalls:
            where = f"{question.id}/{pitfall.id}"
            examples = written.get(pitfall.id)
            if examples is None:
                problems.append(f"{where}: no stance examples")
                continue
            for label in LABELS:
                for lang in LANGUAGES:
                    count = len(examples.examples(label).get(lang))
                    if count < MINIMUM[label]:
                        problems.append(
                            f"{where}: {count} {label} examples in {lang}, {MINIMUM[label]} needed"
                        )
            for lang in LANGUAGES:
                claim = _plain(pitfall.claim.get(lang))
                copies = [e for e in examples.asserts.get(lang) if claim in _plain(e)]
                problems.extend(f"{where}: an assertion copies the claim: {e!r}" for e in copies)
    return problems


def example_count(stance: Iterable[StanceFile]) -> dict[str, int]:
    """Written examples by label; the corrections (rejections too) under their own names, and
    only where there are any, so that a count from before they existed reads the same."""
    counts = dict.fromkeys((*LABELS, "plain", "reported"), 0)
    for file in stance:
        for pitfall in file.pitfalls:
            for label in LABELS:
                examples = pitfall.examples(label)
                counts[label] += len(examples.ru) + len(examples.en)
            for kind, examples in (("plain", pitfall.plain), ("reported", pitfall.reported)):
                counts[kind] += len(examples.ru) + len(examples.en)
    return {k: v for k, v in counts.items() if k in LABELS or v}
