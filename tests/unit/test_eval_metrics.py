"""The statistics `eval` prints, checked against scipy and by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bot.content.loader import QuestionBank
from bot.evaluation.datasets import DatasetError, load_bank_eval, load_external
from bot.evaluation.metrics import (
    isotonic_fit,
    isotonic_predict,
    loqo_rmse,
    pearson,
    pitfall_rates,
    spearman,
)
from bot.scoring.grader import Grader

ROOT = Path(__file__).resolve().parents[2]


def test_correlations_read_rank_and_line() -> None:
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert spearman(x, [v**3 for v in x]) == pytest.approx(1.0)  # same order
    assert pearson(x, [v**3 for v in x]) < 0.99  # not a straight line
    assert pearson(x, [2 * v + 1 for v in x]) == pytest.approx(1.0)
    assert spearman([1, 1, 2, 2], [1, 2, 3, 4]) == pytest.approx(0.894, abs=1e-3)  # ties
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1, 2, 3], [4, 4, 4]))


def test_isotonic_fit_is_monotone_and_pools_violations() -> None:
    knots = isotonic_fit([1, 2, 3, 4], [1.0, 3.0, 2.0, 4.0])
    predicted = isotonic_predict(knots, [1, 2, 3, 4])
    assert list(predicted) == pytest.approx([1.0, 2.5, 2.5, 4.0])
    grid = isotonic_predict(knots, np.linspace(0, 5, 50))
    assert np.all(np.diff(grid) >= 0)


def test_loqo_rmse_is_zero_for_a_monotone_grader_and_not_for_noise() -> None:
    human = [0, 1, 2, 3, 4, 5] * 4
    groups = [g for g in "abcd" for _ in range(6)]
    assert loqo_rmse([h * 2 + 1 for h in human], human, groups) == pytest.approx(0.0)
    assert loqo_rmse([5 - h for h in human], human, groups) > 1.0


def test_pitfall_rates_count_rejections_as_must_not_flag() -> None:
    rates = pitfall_rates(
        flagged=[{"p1"}, set(), {"p2"}, {"p3"}],
        expected=["p1", "p2", None, None],
        rejected=[None, None, None, "p3"],
    )
    assert rates["recall"] == 0.5
    assert rates["precision"] == pytest.approx(1 / 3)
    assert rates["false_flag_rate"] == 1.0  # both answers without a misconception got a flag
    assert rates["rejects_flagged"] == 1


def test_bank_eval_set_loads_with_every_kind() -> None:
    dataset = load_bank_eval(ROOT / "content" / "eval")
    kinds = {s.kind for s in dataset.samples}
    assert {"strong", "partial", "vague", "pitfall", "rejects", "offtopic"} <= kinds
    assert {s.lang for s in dataset.samples} == {"ru", "en"}
    assert all(0 <= s.grade <= 10 for s in dataset.samples)


def test_external_csv_with_mohler_columns(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_text(
        "id,question,desired_answer,student_answer,score_avg\n"
        '1.1,What is a stack?,A LIFO structure.,"Last in, first out list",4.5\n'
        "1.1,What is a stack?,A LIFO structure.,no idea,0\n",
        "utf-8",
    )
    dataset = load_external(path)
    assert dataset.scale == 4.5
    assert [s.group for s in dataset.samples] == ["1.1", "1.1"]
    assert dataset.samples[0].reference == "A LIFO structure."
    bad = tmp_path / "bad.csv"
    bad.write_text("question,answer,grade\nq,a,1\n", "utf-8")
    with pytest.raises(DatasetError, match="reference"):
        load_external(bad)


def test_the_labelled_sets_cover_every_question_of_the_bank() -> None:
    from bot.content.loader import load_bank

    bank = load_bank(ROOT / "content" / "pytorch")
    covered = {
        s.question_id
        for name in ("eval", "heldout")
        for s in load_bank_eval(ROOT / "content" / name).samples
    }
    assert covered == set(bank.questions)  # `eval` grades every question


def test_heldout_set_is_disjoint_from_the_tuning_set_and_names_real_pitfalls() -> None:
    from bot.content.loader import load_bank

    bank = load_bank(ROOT / "content" / "pytorch")
    tuning = load_bank_eval(ROOT / "content" / "eval")
    heldout = load_bank_eval(ROOT / "content" / "heldout", "content/heldout")
    assert len(heldout.samples) >= 150
    assert not {s.question_id for s in tuning.samples} & {s.question_id for s in heldout.samples}
    kinds = {s.kind for s in heldout.samples}
    assert {"strong", "partial", "pitfall", "rejects", "offtopic", "dontknow"} <= kinds
    assert {s.lang for s in heldout.samples} == {"ru", "en"}
    for sample in heldout.samples:
        question = bank.questions[str(sample.question_id)]
        ids = {p.id for p in question.pitfalls}
        assert sample.pitfall is None or sample.pitfall in ids
        assert sample.rejects is None or sample.rejects in ids


def test_blind_set_covers_every_question_and_names_real_pitfalls() -> None:
    from bot.content.loader import load_bank

    bank = load_bank(ROOT / "content" / "pytorch")
    blind = load_bank_eval(ROOT / "content" / "blind", "content/blind")
    covered = {s.question_id for s in blind.samples}
    # Every question of the bank it was written for (55); the bank has grown since.
    assert len(covered) == 55 and covered <= set(bank.questions)
    assert {s.kind for s in blind.samples} == {
        "strong",
        "partial",
        "pitfall",
        "rejects",
        "offtopic",
        "dontknow",
    }
    for sample in blind.samples:
        ids = {p.id for p in bank.questions[str(sample.question_id)].pitfalls}
        assert (sample.kind == "pitfall") == (sample.pitfall in ids)
        assert (sample.kind == "rejects") == (sample.rejects in ids)


def test_eval_grades_bank_and_reference_samples_in_their_order(
    grader: Grader, bank: QuestionBank
) -> None:
    from bot.evaluation.datasets import Sample
    from bot.evaluation.runner import grade_with
    from bot.scoring.reference import ReferenceGrader

    question = bank.questions["zero-grad"]
    good = question.answer.en
    wrong = "zero_grad() deletes the model's weights so training restarts."
    samples = [
        Sample("zero-grad", good, 10, "en", question_id="zero-grad"),
        Sample(
            "ext", "Paris is the capital.", 5, "en", question_text="Capital?", reference="Paris."
        ),
        Sample("zero-grad", wrong, 0, "en", question_id="zero-grad"),
    ]
    graded = grade_with(grader, ReferenceGrader(grader.encoder), bank, samples)
    direct = grader.grade_many([(question, good, "en"), (question, wrong, "en")])
    assert [g[0] for g in graded] == [direct[0].score, graded[1][0], direct[1].score]
    assert graded[0][0] > graded[2][0]
    assert graded[1][0] > 5  # the reference grader read the external answer against its own
