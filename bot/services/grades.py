"""From a grade to the fields stored on an answer row: one mapping for every kind of answer."""

from __future__ import annotations

from collections.abc import Collection

from bot.scoring.grade_result import GradeResult

GRADE_FIELDS = ("score", "verdict", "covered", "missed", "pitfalls", "evidence")
# The bank question an answer reads like an answer to, kept with the evidence (no column).
ANOTHER_QUESTION = "another-question"


def stored_fields(result: GradeResult, only: Collection[str] = GRADE_FIELDS) -> dict[str, object]:
    """The grade as column values: key-point and pitfall ids, and the evidence per point (a
    pitfall's under "pitfall:<id>", one only worth checking under "check:<id>", and the question
    the answer reads like an answer to under ANOTHER_QUESTION). `only`: the columns the table
    has."""
    fields: dict[str, object] = {
        "score": result.score,
        "verdict": result.verdict,
        "covered": result.covered,
        "missed": result.missed,
        "pitfalls": [p.id for p in result.pitfalls],
        "evidence": {
            **{p.id: p.evidence for p in result.points if p.evidence},
            **{f"pitfall:{p.id}": p.evidence for p in result.pitfalls},
            **{f"check:{p.id}": p.evidence for p in result.checks},
            **({ANOTHER_QUESTION: result.answers_question} if result.answers_question else {}),
        },
    }
    return {key: value for key, value in fields.items() if key in only}
