"""Grading against a reference answer alone, and the batch CLI line that asks for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.scoring.service import ScoringService

QUESTION = "What is the role of a prototype program in problem solving?"
REFERENCE = "To simulate the behaviour of portions of the desired software product."


def test_reference_grades_order_answers_sensibly(scoring: ScoringService) -> None:
    grader = scoring.reference_grader()
    good = grader.grade(
        QUESTION, REFERENCE, "It simulates how parts of the final software will behave."
    )
    echo = grader.grade(QUESTION, REFERENCE, "A prototype program plays a role in problem solving.")
    unrelated = grader.grade(QUESTION, REFERENCE, "Binary search halves the interval each step.")
    blank = grader.grade(QUESTION, REFERENCE, "I don't know")
    assert good.score > echo.score  # repeating the question earns little
    assert good.score > unrelated.score
    assert blank.score == 0.0 and blank.verdict == "no-answer"
    assert good.to_json()["question_id"] == ""


def test_reference_batch_equals_one_at_a_time(scoring: ScoringService) -> None:
    grader = scoring.reference_grader()
    answers = ["It simulates parts of the product.", "no idea", "Sorting is n log n."]
    batch = grader.grade_many([(QUESTION, REFERENCE, a, "en") for a in answers])
    single = [grader.grade(QUESTION, REFERENCE, a, "en") for a in answers]
    assert [r.score for r in batch] == [r.score for r in single]


def test_cli_batch_accepts_reference_lines(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    vector_cache: Path,
    scoring: ScoringService,
) -> None:
    monkeypatch.setenv("EMBEDDING_DEVICE", "cpu")
    monkeypatch.setenv("EMBEDDING_CACHE_DIR", str(vector_cache))  # warm: stored by `scoring`
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        "\n".join(
            json.dumps(row)
            for row in [
                {
                    "question": "zero-grad",
                    "answer": "it clears .grad before backward",
                    "lang": "en",
                },
                {  # an answer to another bank question, as the bot would tell it
                    "question": "hooks",
                    "answer": scoring.bank.questions["nan-loss-debug"].answer.en,
                    "lang": "en",
                },
                {
                    "question_text": QUESTION,
                    "reference": REFERENCE,
                    "answer": "It simulates portions of the product.",
                    "lang": "en",
                },
            ]
        ),
        "utf-8",
    )
    assert main(["grade", "--batch", str(batch), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [x["question_id"] for x in lines] == ["zero-grad", "hooks", ""]
    assert lines[1]["answers_question"] == "nan-loss-debug" and lines[1]["score"] <= 1.5
    assert all(set(x) >= {"score", "verdict", "covered", "missed", "pitfalls"} for x in lines)


def test_cli_batch_rejects_a_line_without_question_or_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"answer": "text"}), "utf-8")
    assert main(["grade", "--batch", str(batch)]) == 2
    assert "question_text and reference" in capsys.readouterr().err
