"""Labelled answers: the bank's own set (content/eval/*.jsonl) and external files such as Mohler."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from bot.scoring.text import detect_language

# Column names accepted in external files, first match wins.
QUESTION_COLUMNS = ("question_text", "question")
REFERENCE_COLUMNS = ("reference", "desired_answer", "reference_answer")
ANSWER_COLUMNS = ("answer", "student_answer")
GRADE_COLUMNS = ("grade", "score_avg", "score")
GROUP_COLUMNS = ("question_id", "id")


# The numbered blind sets, content/blind2 … blind29: `eval --blind<n>` reads one (read once,
# for a published figure), and the day each was read, where it has been (content/<set>/README.md).
# One home, so that a new set, or a set read, is recorded in one place.
NUMBERED_BLIND = range(2, 30)
READ_ON = {n: "2026-12-02" for n in (2, 3)} | {n: "2026-12-03" for n in (4, 5, 6, 7)}
READ_ON |= {n: "2026-12-04" for n in (8, 9)} | {n: "2026-12-06" for n in range(10, 18)}
READ_ON |= {n: "2026-12-07" for n in (18, 19, 20, 21, 22, 23, 24, 25, 26, 27)}
READ_ON |= {28: "2026-12-08"}
# Still to be read: what no model may train, nor any threshold be chosen, on.
UNREAD = frozenset(f"blind{n}" for n in NUMBERED_BLIND if n not in READ_ON)


class DatasetError(ValueError):
    pass


@dataclass(frozen=True)
class Sample:
    group: str  # the question the answer belongs to: the unit left out in leave-one-out
    answer: str
    grade: float  # the human grade on the data set's own scale
    lang: str
    question_id: str | None = None  # a bank question
    question_text: str | None = None  # or a question with a reference answer
    reference: str | None = None
    kind: str | None = None  # strong | partial | vague | pitfall | rejects | offtopic | dontknow
    pitfall: str | None = None  # the pitfall the answer falls into
    rejects: str | None = None  # the pitfall the answer explicitly rejects
    answers_question: str | None = None  # offtopic: the bank question it answers instead


@dataclass(frozen=True)
class Dataset:
    name: str
    scale: float  # the top human grade
    samples: list[Sample]


def load_bank_eval(directory: Path, name: str = "content/eval") -> Dataset:
    samples: list[Sample] = []
    for path in sorted(directory.glob("*.jsonl")):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                samples.append(
                    Sample(
                        group=row["question"],
                        answer=row["answer"],
                        grade=float(row["grade"]),
                        lang=row["lang"],
                        question_id=row["question"],
                        kind=row.get("kind"),
                        pitfall=row.get("pitfall"),
                        rejects=row.get("rejects"),
                        answers_question=row.get("answers_question"),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(f"{path.name}:{number}: {exc}") from exc
    if not samples:
        raise DatasetError(f"no labelled answers in {directory}")
    return Dataset(name, 10.0, samples)


def _pick(row: dict[str, str], names: tuple[str, ...], required: bool = True) -> str | None:
    for name in names:
        if row.get(name) not in (None, ""):
            return row[name]
    if required:
        raise DatasetError(f"missing column: one of {', '.join(names)}")
    return None


def load_external(path: Path) -> Dataset:
    """A CSV or JSON-lines file of (question, reference answer, answer, human grade)."""
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        rows = list(csv.DictReader(text.splitlines()))
    samples = []
    for number, row in enumerate(rows, 1):
        try:
            question = str(_pick(row, QUESTION_COLUMNS))
            answer = str(_pick(row, ANSWER_COLUMNS))
            samples.append(
                Sample(
                    group=str(_pick(row, GROUP_COLUMNS, required=False) or question),
                    answer=answer,
                    grade=float(_pick(row, GRADE_COLUMNS) or 0),
                    lang=str(row.get("lang") or detect_language(answer)),
                    question_text=question,
                    reference=str(_pick(row, REFERENCE_COLUMNS)),
                )
            )
        except (DatasetError, ValueError) as exc:
            raise DatasetError(f"{path.name} row {number}: {exc}") from exc
    if not samples:
        raise DatasetError(f"no rows in {path}")
    scale = max(s.grade for s in samples)
    return Dataset(path.name, scale if scale > 0 else 1.0, samples)
