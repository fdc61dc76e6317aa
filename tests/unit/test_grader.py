"""Grading behaviour on the bank's questions with the real bundled model."""

from __future__ import annotations

import pytest

from bot.content.loader import QuestionBank
from bot.scoring.grader import Grader

STRONG = {
    "zero-grad": (
        "Backward does not overwrite gradients, it adds them into the .grad field of every "
        "parameter, so gradients accumulate between iterations. optimizer.zero_grad() clears "
        "them before the next backward pass; since PyTorch 2.0 it sets .grad to None by default "
        "(set_to_none=True), which saves memory. If you forget it, each step uses the sum of old "
        "and new gradients and training diverges. Accumulation is sometimes wanted: gradient "
        "accumulation calls zero_grad only every k micro-batches to emulate a bigger batch."
    ),
    "train-vs-eval": (
        "model.train() and model.eval() set the training flag on the module and all submodules. "
        "In train mode dropout randomly zeroes activations and BatchNorm normalises with the "
        "statistics of the current batch while updating running_mean and running_var. In eval "
        "mode dropout is turned off and BatchNorm uses the stored running statistics, so the "
        "output is deterministic. eval() does not disable autograd: for inference you also wrap "
        "the code in torch.no_grad() or torch.inference_mode(). Forgetting to call train() "
        "again after validation is a classic bug."
    ),
    "autograd": (
        "When a tensor has requires_grad=True, autograd records every operation on it during the "
        "forward pass and builds a dynamic graph: each result keeps a grad_fn pointing to the "
        "backward function. Calling loss.backward() walks this graph in reverse order using the "
        "chain rule and stores gradients in the .grad of leaf tensors such as the parameters. "
        "The graph is freed after backward unless retain_graph=True, and gradients accumulate, "
        "so you zero them between steps. torch.no_grad() and detach() stop the recording."
    ),
}

OFF_TOPIC = [
    "I spent the weekend hiking in the mountains and cooking pasta with my friends.",
    "Я в выходные ходил в горы и готовил пасту с друзьями.",
    "The French Revolution began in 1789 and ended with the rise of Napoleon.",
]


@pytest.mark.parametrize("question_id", sorted(STRONG))
def test_strong_answer_scores_at_least_seven(
    grader: Grader, bank: QuestionBank, question_id: str
) -> None:
    result = grader.grade(bank.questions[question_id], STRONG[question_id])
    assert result.score >= 7.0, result.to_json()
    assert len(result.covered) >= len(result.missed)


@pytest.mark.parametrize("question_id", ["train-vs-eval", "pytorch-advantages", "zero-grad"])
def test_model_answers_score_high_in_both_languages(
    grader: Grader, bank: QuestionBank, question_id: str
) -> None:
    question = bank.questions[question_id]
    for lang in ("en", "ru"):
        assert grader.grade(question, question.answer.get(lang), lang).score >= 7.0, lang


@pytest.mark.parametrize("answer", OFF_TOPIC)
@pytest.mark.parametrize("question_id", ["zero-grad", "autograd", "dataloader"])
def test_off_topic_scores_at_most_two(
    grader: Grader, bank: QuestionBank, question_id: str, answer: str
) -> None:
    assert grader.grade(bank.questions[question_id], answer).score <= 2.0


@pytest.mark.parametrize("answer", ["", "   ", "не знаю", "Не знаю.", "I don't know", "idk", "?"])
def test_empty_or_dont_know_scores_zero(grader: Grader, bank: QuestionBank, answer: str) -> None:
    result = grader.grade(bank.questions["zero-grad"], answer)
    assert result.score == 0.0
    assert result.verdict == "no-answer"
    assert result.covered == []


@pytest.mark.parametrize(
    ("question_id", "answer"),
    [
        (
            "create-tensor",
            "i'd just do torch.tensor(my_list)... the rest, honestly I don't know the difference, "
            "never needed it",
        ),
        ("fsdp", "FSDP... что-то распределённое, вроде как DDP, только новее? Не работал с ним"),
        (  # longer, but the first sentence says so and the rest is a guess (43 words)
            "zero-grad",
            "Honestly I have never used zero_grad myself, the training loop was always given. "
            "I think it resets the gradients, because backward adds to .grad instead of "
            "overwriting it, so you call it before loss.backward() on every step, or maybe "
            "after optimizer.step().",
        ),
    ],
)
def test_naming_an_api_then_not_knowing_scores_at_most_one_and_a_half(
    grader: Grader, bank: QuestionBank, question_id: str, answer: str
) -> None:
    assert grader.grade(bank.questions[question_id], answer).score <= 1.5


def test_generic_answer_scores_low(grader: Grader, bank: QuestionBank) -> None:
    result = grader.grade(
        bank.questions["pytorch-advantages"], "PyTorch is convenient, flexible and pythonic."
    )
    assert result.score <= 4.0


def test_misconception_is_flagged_and_rejection_is_not(grader: Grader, bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    wrong = grader.grade(
        question,
        "model.eval() turns off gradient computation, so during validation no gradients are "
        "computed and it uses less memory.",
    )
    assert "eval-disables-grad" in [p.id for p in wrong.pitfalls]
    right = grader.grade(
        question,
        "model.eval() does not turn off gradient computation: it only switches dropout off and "
        "makes BatchNorm use running statistics. Gradients are disabled by torch.no_grad().",
    )
    assert "eval-disables-grad" not in [p.id for p in right.pitfalls]
    assert right.score > wrong.score


@pytest.mark.parametrize(
    "answer",
    [
        "model.eval() отключает вычисление градиентов, поэтому на валидации меньше памяти.",
        "model.eval() turns off gradient computation.",
    ],
)
def test_an_answer_that_is_only_a_misconception_is_told_so_not_called_off_topic(
    grader: Grader, bank: QuestionBank, answer: str
) -> None:
    result = grader.grade(bank.questions["train-vs-eval"], answer)
    assert [p.id for p in result.pitfalls] == ["eval-disables-grad"]
    assert result.verdict == "weak" and result.score <= 2.0


def test_result_json_has_the_stable_fields(grader: Grader, bank: QuestionBank) -> None:
    data = grader.grade(bank.questions["zero-grad"], STRONG["zero-grad"], "en").to_json()
    assert {"question_id", "score", "verdict", "covered", "missed", "pitfalls", "language"} <= set(
        data
    )
    assert data["question_id"] == "zero-grad" and data["language"] == "en"
    assert data["score"] == round(data["score"], 1) and 0 <= data["score"] <= 10
    assert set(data["covered"]).isdisjoint(data["missed"])


def test_covered_points_quote_the_answer(grader: Grader, bank: QuestionBank) -> None:
    result = grader.grade(bank.questions["zero-grad"], STRONG["zero-grad"])
    for point in result.points:
        if point.covered:
            assert point.evidence and point.evidence in STRONG["zero-grad"]


def test_a_flagged_sentence_is_never_quoted_as_covering_a_key_point(
    grader: Grader, bank: QuestionBank
) -> None:
    """A clause of a sentence the feedback calls a misconception may still earn credit, but the
    feedback does not also quote it under a ✅ as "your words"."""
    from pathlib import Path

    from bot.evaluation.datasets import load_bank_eval

    root = Path(__file__).resolve().parents[2] / "content" / "heldout"
    samples = [s for s in load_bank_eval(root).samples if s.kind == "pitfall"]
    results = grader.grade_many(
        [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in samples]
    )
    unquoted = 0
    for result in results:
        flagged = [hit.evidence for hit in result.pitfalls]
        for point in result.points:
            if point.evidence:
                assert not any(point.evidence in sentence for sentence in flagged)
            unquoted += point.covered and point.evidence is None
    assert unquoted  # the case occurs in these answers: the rule above was exercised


@pytest.mark.parametrize(
    "answer",
    [
        "Many think model.eval() turns off gradient computation. It does not: eval() switches "
        "dropout and batchnorm to inference behaviour, and autograd still records the graph.",
        "Многие думают, что model.eval() отключает вычисление градиентов. На самом деле eval() "
        "только переключает dropout и batchnorm, а граф autograd всё равно строится.",
    ],
)
def test_a_sentence_reporting_a_belief_is_not_quoted_as_a_covered_point(
    grader: Grader, bank: QuestionBank, answer: str
) -> None:
    result = grader.grade(bank.questions["train-vs-eval"], answer)
    reported = answer.split(". ")[0]
    assert result.covered  # the rest of the answer still counts
    assert not any(p.evidence and p.evidence.rstrip(".") == reported for p in result.points)
    assert not result.pitfalls and not result.checks


def test_the_cost_without_the_model_times_no_model_work(
    grader: Grader, bank: QuestionBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bench`'s "grading without the model": the answers' vectors are computed once, before
    the clock starts, and the grading it times gives what grade_many gives."""
    question = bank.questions["zero-grad"]
    jobs = [
        (question, "zero_grad clears .grad; without it gradients accumulate across steps.", "en"),
        (question, "Градиенты копятся в .grad, поэтому их обнуляют перед backward.", "ru"),
        (question, "no idea", "en"),
    ]
    encoded: list[int] = []
    encode = grader.encoder.encode
    monkeypatch.setattr(
        grader.encoder, "encode", lambda texts, *a, **k: encoded.append(len(texts)) or encode(texts)
    )
    finished: list[list[float]] = []
    finish = grader._finish
    monkeypatch.setattr(
        grader, "_finish", lambda p, v: finished.append([r.score for r in finish(p, v)]) or []
    )
    assert grader.seconds_without_model(jobs) > 0
    assert len(encoded) == 1  # one model call, for both answers with sentences
    monkeypatch.undo()
    assert finished == [[r.score for r in grader.grade_many(jobs)]]
