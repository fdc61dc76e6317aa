"""The stance flag model: its trees as scikit-learn fitted them, its file, its directions, the
rows it reads, and its place in the verdicts (it decides instead of P(asserts) at flag_at)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bot.content.loader import QuestionBank
from bot.evaluation.stance_flags import choose, said, split, training_arrays
from bot.scoring.grader import Grader
from bot.scoring.stance.flag_model import (
    DEPTH,
    FEATURES,
    FLAGS_FILE,
    LEAF_SIZE,
    LEARNING_RATE,
    SIGNS,
    CandidateReading,
    FlagModel,
    features,
    fit,
    load_flag_model,
    log_odds,
)
from bot.scoring.stance.judge import candidates, verdicts


def synthetic(n: int = 800) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, len(FEATURES)))
    x[:, -1] = rng.integers(0, 3, size=n)  # a count, few distinct values
    y = (x[:, 0] - x[:, 1] + 0.5 * np.sin(3 * x[:, 8]) + rng.normal(0, 0.5, n) > 0).astype(int)
    return x, y


def test_the_stored_trees_give_what_scikit_learn_fitted(tmp_path: Path) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y = synthetic()
    model = fit(x, y)
    reference = HistGradientBoostingClassifier(
        max_iter=150,
        max_depth=DEPTH,
        learning_rate=LEARNING_RATE,
        min_samples_leaf=LEAF_SIZE,
        monotonic_cst=list(SIGNS.values()),
        early_stopping=False,
        random_state=0,
    ).fit(x, y)
    assert np.allclose(model.probabilities(x), reference.predict_proba(x)[:, 1], atol=1e-5)
    assert model.probabilities(x[5])[0] == pytest.approx(model.probabilities(x)[5])
    # Saved and loaded beside the stance model's weights, for the adapter it was fitted on only.
    replace(model, adapter="abc").save(tmp_path / FLAGS_FILE)
    loaded = load_flag_model(tmp_path, "abc")
    assert loaded is not None
    assert np.allclose(loaded.probabilities(x), model.probabilities(x))
    assert load_flag_model(tmp_path, "a retrained adapter") is None
    assert load_flag_model(tmp_path / "missing", "abc") is None


def test_more_p_asserts_never_lowers_and_more_p_rejects_never_raises() -> None:
    x, y = synthetic()
    model = fit(x, y)
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(200, len(FEATURES)))
    base = model.probabilities(rows)
    for column, sign in ((0, 1), (1, -1)):
        moved = rows.copy()
        moved[:, column] += 2.0
        assert np.all(sign * (model.probabilities(moved) - base) >= -1e-9)


def reading(asserts: float, point_sim: float = 0.1, rejects: float = 0.02) -> CandidateReading:
    return CandidateReading(asserts, rejects, 0.5, -np.inf, 0.6, 0.4, point_sim)


def test_the_features_read_the_best_candidate_and_the_runner_up() -> None:
    row = features([reading(0.3, point_sim=0.9), reading(0.8, point_sim=0.2, rejects=0.1)])
    assert row[0] == pytest.approx(log_odds(0.8))
    assert row[1] == pytest.approx(log_odds(0.1))
    assert row[2] == pytest.approx(log_odds(0.3))
    assert row[4] == -10.0  # every gate closed
    assert row[7] == pytest.approx(0.4 - 0.6)
    assert row[8] == pytest.approx(0.2)  # the best candidate's, not the other's
    assert row[9] == 1.0  # one candidate at 0.5 or more


def by_point_sim(at: float = 0.5) -> FlagModel:
    """One tree: said where the best sentence sits at most 0.5 from every key point."""
    index = FEATURES.index("point_sim")
    return FlagModel(
        0.0,
        ((index, -1, -1),),
        ((0.5, 0.0, 0.0),),
        ((1, 0, 0),),
        ((2, 0, 0),),
        ((0.0, 5.0, -5.0),),
        flag_at=at,
    )


class ScriptedStance:
    """P(asserts) 0.92 for a sentence with `word`, 0.05 for any other."""

    flag_at = 0.6
    head_floor = -100.0
    veto = 0.0

    def __init__(self, flags: FlagModel | None, word: str = "\0") -> None:
        self.flags, self.word = flags, word

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        p = np.array([0.92 if self.word in s else 0.05 for _, s in pairs])
        return np.stack([p, (1 - p) / 2, (1 - p) / 2], axis=1).reshape(-1, 3)


def never(at: float = 0.5) -> FlagModel:
    return FlagModel(-10.0, ((-1,),), ((0.0,),), ((0,),), ((0,),), ((0.0,),), flag_at=at)


def test_the_flag_model_decides_instead_of_p_asserts_at_flag_at(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    sentences = ["alpha sentence"]
    raw = np.array([[0.5, -50.0]])
    gated = np.full((1, 2), -np.inf)
    found = candidates(question, sentences, raw, gated, floor=0.0)
    assert [(c.sentence, c.pitfall) for c in found] == [(0, 0)]
    sims = np.zeros((1, 2))
    sure = np.array([0.9])
    # Without a flag model, P(asserts) 0.9 at flag_at 0.6 says it.
    assert verdicts(ScriptedStance(None), question, sentences, found, sure, 1.2, sims).said
    model = ScriptedStance(by_point_sim())
    # With one, a sentence close to a key point is not said, however sure the stance model ...
    close = [reading(0.9, point_sim=0.8)]
    assert not verdicts(model, question, sentences, found, sure, 1.2, sims, close).said
    # ... and one far from every key point is, below flag_at, quoted with its P(asserts).
    far = [reading(0.3, point_sim=0.1)]
    hits = verdicts(model, question, sentences, found, np.array([0.3]), 1.2, sims, far).said
    assert [(h.id, h.evidence, h.probability) for h in hits] == [
        (question.pitfalls[0].id, "alpha sentence", 0.3)
    ]


def test_a_sure_reading_the_flag_model_declines_becomes_a_hint(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    sentences = ["alpha sentence", "beta sentence"]
    raw = np.array([[0.5, 0.4], [0.3, -50.0]])
    found = candidates(question, sentences, raw, np.full((2, 2), -np.inf), floor=0.0)
    sims = np.zeros((2, 2))
    # P(asserts): the first pitfall's best candidate 0.9 (at flag_at 0.6 or more), the second's
    # 0.4 (below): only the first is a hint when the flag model declines both.
    p = np.array([0.9 if (c.sentence, c.pitfall) == (1, 0) else 0.4 for c in found])
    model = ScriptedStance(never())
    read = [reading(float(q)) for q in p]
    judged = verdicts(model, question, sentences, found, p, 1.2, sims, read)
    assert judged.said == []
    assert [(h.id, h.evidence, h.probability) for h in judged.doubted] == [
        (question.pitfalls[0].id, "beta sentence", 0.9)
    ]
    # Said by the head's own flag (its gated logit 0.5 at its flag_at 0.45): no hint for it.
    gated = candidates(question, sentences, raw, raw, floor=0.0)
    assert [(c.sentence, c.pitfall) for c in gated] == [(c.sentence, c.pitfall) for c in found]
    said_by_head = verdicts(model, question, sentences, gated, p, 0.45, sims, read)
    assert [h.id for h in said_by_head.said] == [question.pitfalls[0].id]
    assert said_by_head.doubted == []
    # Without a flag model P(asserts) decides: said, never a hint.
    plain = verdicts(ScriptedStance(None), question, sentences, found, p, 1.2, sims)
    assert [h.id for h in plain.said] == [question.pitfalls[0].id]
    assert plain.doubted == []


class Answer:
    def __init__(self, pitfall: str | None = None, rejects: str | None = None) -> None:
        self.pitfall, self.rejects = pitfall, rejects


def test_the_threshold_is_the_most_recall_within_the_targets() -> None:
    # Two answers asserting "a", forty clean ones (two whose "b" reads 0.7), one rejecting "a".
    samples = [Answer("a"), Answer("a"), *[Answer() for _ in range(40)], Answer(rejects="a")]
    one = np.zeros(len(FEATURES))
    rows = [[("a", one, False)], [("a", one, False)]] + [[("b", one, False)]] * 40
    rows += [[("a", one, False)]]
    chances = [np.array([0.9]), np.array([0.4])] + [np.array([0.1])] * 38 + [np.array([0.7])] * 2
    chances += [np.array([0.2])]
    x, y = training_arrays(samples, rows)  # type: ignore[arg-type]
    assert x.shape == (43, len(FEATURES)) and list(y[:3]) == [1, 1, 0] and y.sum() == 2
    # At 0.4 both are said, but so are two clean answers (2 of 41 > 3 %); at 0.21 the rejecting
    # one too; at 0.71 one of the two is, and no other answer.
    assert choose(samples, rows, chances) == 0.71  # type: ignore[arg-type]
    flags = said(rows, chances, 0.71)
    assert flags[0] == {"a": 1.0} and flags[1] == {"a": 0.0}
    # The head's own flag stands whatever the trees say.
    rows[1] = [("a", one, True)]
    assert said(rows, chances, 0.71)[1] == {"a": 1.0}
    assert [len(c) for c in split(rows, np.arange(43.0))] == [1] * 43


def test_the_grader_reads_the_flag_rows_and_lets_the_flag_model_decide(
    grader: Grader, bank: QuestionBank
) -> None:
    question = bank.questions["train-vs-eval"]
    answer = (
        "model.train() enables dropout and batch statistics in BatchNorm. "
        "After model.eval() autograd stops tracking operations, so validation is cheaper."
    )
    parts = (grader.encoder, grader._calibration, grader.options)
    sure = Grader(*parts, ScriptedStance(None, "tracking"))
    assert "eval-disables-grad" in {h.id for h in sure.grade(question, answer, "en").pitfalls}
    # What `train stance-flags` fits on: one row per pitfall read, P(asserts) first.
    (rows,) = sure.flag_rows([(question, answer, "en")])
    by_id = {pid: (row, head) for pid, row, head in rows}
    assert set(by_id) <= {p.id for p in question.pitfalls}
    row, _ = by_id["eval-disables-grad"]
    assert row.shape == (len(FEATURES),) and row[0] == pytest.approx(log_odds(0.92))
    # A flag model that says nothing overrules P(asserts) 0.92 (the head's own flags aside).
    refusing = Grader(*parts, ScriptedStance(never(), "tracking"))
    said = {h.id for h in refusing.grade(question, answer, "en").pitfalls}
    head_says = {pid for pid, (_, head) in by_id.items() if head}
    assert said == head_says and "eval-disables-grad" not in said


def test_the_committed_flag_model_goes_with_the_committed_stance_adapter() -> None:
    from bot.scoring.stance.model import ADAPTER_FILE, WEIGHTS_DIR, StanceConfig

    adapter = StanceConfig.load(WEIGHTS_DIR).sha256[ADAPTER_FILE]
    model = load_flag_model(WEIGHTS_DIR, adapter)
    assert model is not None and 0.0 < model.flag_at < 1.0
