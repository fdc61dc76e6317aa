"""The fitted pitfall head: its file, its two thresholds, and the fit that produces it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.content.loader import QuestionBank
from bot.content.schema import Markers
from bot.evaluation.datasets import Dataset, Sample
from bot.evaluation.pitfall_training import Rows, fit, threshold_for
from bot.scoring.pitfall_head import (
    FEATURES,
    HEADS_DIR,
    MARKER,
    SAME_POLARITY,
    PitfallHead,
    head_path,
    load_head,
)
from bot.scoring.pitfalls import by_head, distinct_stems, has_marker, unit_features


def _claim_only(flag_at: float, check_at: float) -> PitfallHead:
    """A head whose logit is the claim similarity itself."""
    weights = tuple(1.0 if name == "claim" else 0.0 for name in FEATURES)
    return PitfallHead("test", weights, 0.0, flag_at, check_at)


def test_head_file_round_trip_and_slug(tmp_path: Path) -> None:
    head = _claim_only(0.8, 0.6)
    path = head_path("/models/Multilingual-E5-Small", tmp_path)
    assert path.name == "multilingual-e5-small.json"
    head.save(path)
    assert load_head("/models/Multilingual-E5-Small", tmp_path) == head
    assert load_head("another-model", tmp_path) is None
    stale = path.read_text("utf-8").replace('"log_length"', '"something_else"')
    path.write_text(stale, "utf-8")
    with pytest.raises(ValueError, match="train pitfalls"):
        load_head("/models/Multilingual-E5-Small", tmp_path)


def test_by_head_says_checks_or_keeps_quiet(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    units = ["model.eval() turns off gradients", "dropout is off in eval mode"]
    matrix = np.zeros((2, len(question.pitfalls), len(FEATURES)))
    matrix[..., SAME_POLARITY] = matrix[..., MARKER] = 1.0
    matrix[0, 0, 0] = 0.9  # the first sentence is very close to the first claim
    matrix[1, 1, 0] = 0.7  # the second is somewhat close to the second claim
    said, checks = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert [(h.id, h.evidence) for h in said] == [(question.pitfalls[0].id, units[0])]
    assert [(h.id, h.evidence) for h in checks] == [(question.pitfalls[1].id, units[1])]
    said, checks = by_head(_claim_only(0.95, 0.95), question, units, matrix)
    assert said == [] and checks == []


def test_a_sentence_that_negates_the_claim_is_never_said_to_hold_it(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    units = ["eval() does not turn off gradients", "eval() turns off gradients"]
    matrix = np.zeros((2, len(question.pitfalls), len(FEATURES)))
    matrix[..., MARKER] = 1.0
    matrix[0, 0, 0] = 0.95  # closest, but its polarity disagrees with the claim's
    said, checks = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert said == [] and [(h.id, h.evidence) for h in checks] == [
        (question.pitfalls[0].id, units[0])
    ]
    matrix[1, 0, 0], matrix[1, 0, SAME_POLARITY] = 0.85, 1.0  # a later sentence asserts it
    said, checks = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert [(h.id, h.evidence) for h in said] == [(question.pitfalls[0].id, units[1])]
    assert checks == []


def test_a_sentence_without_a_marker_word_is_at_most_worth_checking(bank: QuestionBank) -> None:
    """ "Dropout zeroes random activations" is close to "dropout zeroes the layer's weights", but
    has none of that misconception's marker words: it is not accused of it."""
    question = bank.questions["dropout"]
    index = [p.id for p in question.pitfalls].index("dropout-zeroes-weights")
    pitfall = question.pitfalls[index]
    units = ["Dropout zeroes random activations during training", "Dropout зануляет веса слоя"]
    assert [has_marker(u, pitfall) for u in units] == [False, True]
    matrix = np.zeros((2, len(question.pitfalls), len(FEATURES)))
    matrix[..., SAME_POLARITY] = 1.0
    matrix[:, index, MARKER] = [has_marker(u, pitfall) for u in units]
    matrix[0, index, 0] = 0.95
    said, checks = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert said == [] and [h.evidence for h in checks] == [units[0]]
    matrix[1, index, 0] = 0.85
    said, _ = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert [h.evidence for h in said] == [units[1]]


def test_a_sentence_that_reports_the_belief_is_neither_said_nor_hinted(bank: QuestionBank) -> None:
    """ "Many think eval() turns off gradients" names the misconception to reject it: no flag and
    no "sounds like a common misconception" hint (unit_features marks it)."""
    question = bank.questions["train-vs-eval"]
    units = ["many think model.eval() turns off gradients", "model.eval() turns off gradients"]
    units.append(" ".join(units))  # the whole answer: the last unit, never a candidate
    qv_stems = distinct_stems(question)
    sims = np.zeros((len(units), len(question.pitfalls)))
    sims[:, 0] = 0.95  # both close to "eval() turns off gradients"
    points = np.zeros((len(units), len(question.key_points)))
    matrix = unit_features(question, units, qv_stems, sims, sims * 0, points)
    units = units[:2]
    assert list(matrix[:, 0, FEATURES.index("reported")]) == [1.0, 0.0]
    said, checks = by_head(_claim_only(0.8, 0.6), question, units[:1], matrix[:1])
    assert said == [] and checks == []
    said, _ = by_head(_claim_only(0.8, 0.6), question, units[1:], matrix[1:])
    assert [h.evidence for h in said] == [units[1]]


def test_a_sentence_said_to_hold_one_misconception_is_not_hinted_with_another(
    bank: QuestionBank,
) -> None:
    question = bank.questions["train-vs-eval"]
    units = ["eval() turns off gradients and no_grad() is enough", "dropout is off in eval"]
    matrix = np.zeros((2, len(question.pitfalls), len(FEATURES)))
    matrix[..., SAME_POLARITY] = matrix[..., MARKER] = 1.0
    matrix[0, 0, 0] = 0.9  # said: the first claim
    matrix[0, 1, 0] = 0.7  # would be worth checking for the second, in the same sentence
    said, checks = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert [h.id for h in said] == [question.pitfalls[0].id] and checks == []
    matrix[1, 1, 0] = 0.65  # another sentence close to the second claim is still hinted
    said, checks = by_head(_claim_only(0.8, 0.6), question, units, matrix)
    assert [(h.id, h.evidence) for h in checks] == [(question.pitfalls[1].id, units[1])]


def test_markers_are_prefixes_and_phrases_need_every_word(bank: QuestionBank) -> None:
    pitfall = (
        bank.questions["train-vs-eval"]
        .pitfalls[0]
        .model_copy(update={"markers": Markers(ru=("отключ",), en=("turn off", "disabl"))})
    )
    assert has_marker("eval() disables gradients", pitfall)
    assert has_marker("it turns autograd off", pitfall)  # a phrase: its words in any order
    assert not has_marker("it turns dropout into inference mode", pitfall)
    assert has_marker("eval() отключает градиенты", pitfall)  # either language
    # A prefix of a word, never its middle ("predisabled"); "re-disabling" holds the word.
    assert has_marker("re-disabling it", pitfall)
    assert not has_marker("predisabled flags, turnover", pitfall)
    assert has_marker("Turn it on, then OFF", pitfall)  # any case
    assert has_marker("no markers, no gate", pitfall.model_copy(update={"markers": None}))
    every = [p for q in bank for p in q.pitfalls]
    assert all(p.markers is not None for p in every), "every bank pitfall has markers"


def test_fit_learns_the_signal_and_the_threshold_meets_its_false_flag_target() -> None:
    rng = np.random.default_rng(0)
    n = 400
    labels = (rng.random(n) < 0.2).astype(int)
    x = rng.normal(size=(n, len(FEATURES)))
    x[:, 0] += 2.5 * labels  # only "claim" carries the label
    weights, bias = fit(x, labels)
    assert weights[0] > 2 * np.abs(weights[1:]).max()
    # One row per answer: answer i is labelled with pitfall "p" when its row is positive.
    samples = [
        Sample(group=f"q{i % 10}", answer="a", grade=5, lang="en", pitfall="p" if y else None)
        for i, y in enumerate(labels)
    ]
    dataset = Dataset("synthetic", 10.0, samples)
    rows = Rows(x, labels, np.arange(n), ["p"] * n, [s.group for s in samples], np.ones(n, bool))
    logits = x @ weights + bias
    threshold, recall, false = threshold_for(dataset, rows, logits, 0.05)
    assert false <= 0.05
    negatives = logits[labels == 0]
    assert np.mean(negatives >= threshold) == pytest.approx(false)
    assert recall > 0.5


@pytest.mark.parametrize("path", sorted(HEADS_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_committed_heads_load_and_order_their_thresholds(path: Path) -> None:
    head = PitfallHead.load(path)
    assert len(head.weights) == len(FEATURES)
    assert head.check_at <= head.flag_at
    assert head.figures["oof_flag_false"] <= 0.05


def test_the_words_only_a_correction_uses_count_against_the_claim(bank: QuestionBank) -> None:
    """A sentence saying "dropout zeroes activations" uses the correction's own word; "…zeroes
    weights" does not. The fitted heads weigh that share against the pitfall (negative for every
    model)."""
    question = bank.questions["dropout"]
    index = [p.id for p in question.pitfalls].index("dropout-zeroes-weights")
    claim_only, correction_only = distinct_stems(question)[index]
    assert "activ" in " ".join(correction_only) and not claim_only & correction_only
    units = ["Dropout zeroes activations, the weights stay intact", "Dropout zeroes weights"]
    units.append(" ".join(units))  # the whole answer comes last and is no candidate
    sims = np.zeros((len(units), len(question.pitfalls)))
    matrix = unit_features(question, units, distinct_stems(question), sims, sims, np.zeros((3, 1)))
    share = matrix[:, index, FEATURES.index("correction_words")]
    assert share[0] > 0 and share[1] == 0
    for path in sorted(HEADS_DIR.glob("*.json")):
        weights = dict(zip(FEATURES, PitfallHead.load(path).weights, strict=True))
        assert weights["correction_words"] < 0, path.name
