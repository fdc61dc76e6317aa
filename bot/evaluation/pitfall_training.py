"""`python -m bot train pitfalls`: fits the pitfall head of the loaded model on content/eval and
content/heldout (content/blind stays out: it measures the result).

Each (answer, pitfall of its question, candidate sentence) is one row of features; an answer
labelled with that pitfall makes its rows positive. Only the sentence that states the
misconception is truly positive, so positive answers contribute their most claim-like sentence
(by cosine with the claim), and every sentence of every other answer is a negative: at grading
time a pitfall is flagged when any sentence reaches the threshold.

The weights come from a logistic regression (PyTorch, L-BFGS, fixed seed); the two thresholds
from out-of-fold logits, folds by question, so the reported figures are not the fit's own.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import Dataset, load_bank_eval
from bot.scoring.grader import Grader
from bot.scoring.pitfall_head import FEATURES, REPORTED, PitfallHead, head_path, said_logits
from bot.scoring.service import ScoringService, grader_options

FOLDS = 5
# Out-of-fold false-flag rate allowed for "you said this" (the goal is 0.05 on new answers). At
# 0.045, fitted on content/eval alone, answers no one had tuned on (content/blind) got 0.08, so
# the head is now chosen at 0.03 over both labelled sets (docs/grading.md).
FLAG_TARGET = 0.03
CHECK_TARGET = 0.15  # for "worth checking", which costs no points and accuses no one
L2 = 0.01


@dataclass(frozen=True)
class Rows:
    features: np.ndarray  # (rows, FEATURES)
    labels: np.ndarray  # 1 where the row's answer states the row's pitfall
    sample: np.ndarray  # index of the answer in the data set
    pitfall: list[str]
    question: list[str]
    train: np.ndarray  # rows the fit uses (positives: only each answer's most claim-like one)


def collect(grader: Grader, bank: QuestionBank, dataset: Dataset) -> Rows:
    feats: list[np.ndarray] = []
    labels: list[int] = []
    samples: list[int] = []
    pitfalls: list[str] = []
    questions: list[str] = []
    train: list[bool] = []
    for index, sample in enumerate(dataset.samples):
        if sample.question_id is None:
            continue
        question = bank.questions[sample.question_id]
        _, matrix = grader.pitfall_features(question, sample.answer)
        if matrix.size == 0:
            continue
        for p, pitfall in enumerate(question.pitfalls):
            positive = sample.pitfall == pitfall.id
            best = int(np.argmax(matrix[:, p, 0]))
            for unit in range(matrix.shape[0]):
                feats.append(matrix[unit, p])
                labels.append(int(positive))
                samples.append(index)
                pitfalls.append(pitfall.id)
                questions.append(question.id)
                train.append(not positive or unit == best)
    return Rows(
        np.array(feats, dtype=np.float64).reshape(-1, len(FEATURES)),
        np.array(labels),
        np.array(samples),
        pitfalls,
        questions,
        np.array(train, dtype=bool),
    )


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression (scikit-learn) on standardised features; returns weights and bias for
    raw ones, so that the bot's inference stays a dot product (bot/scoring/pitfall_head.py)."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    # Positives are rare (one sentence of a few answers); weigh them up, but not to parity,
    # which would buy recall with false flags.
    rate = max(float(y.mean()), 1e-6)
    model = LogisticRegression(
        C=1 / (2 * L2 * len(y)),  # the mean loss + L2 * |w|^2, in scikit-learn's terms
        class_weight={0: 1.0, 1: ((1 - rate) / rate) ** 0.5},
        max_iter=1000,
    )
    model.fit((x - mean) / scale, y)
    weight = model.coef_[0]
    return weight / scale, float(model.intercept_[0] - (weight * mean / scale).sum())


def flagged(rows: Rows, logits: np.ndarray, threshold: float, count: int) -> list[set[str]]:
    """Per answer of the data set: the pitfalls whose best sentence reaches the threshold."""
    result: list[set[str]] = [set() for _ in range(count)]
    for i in np.flatnonzero(logits >= threshold):
        result[int(rows.sample[i])].add(rows.pitfall[i])
    return result


def rates(dataset: Dataset, flags: list[set[str]]) -> tuple[float, float]:
    """(recall, false-flag rate) over the whole data set."""
    positives = [s.pitfall in f for s, f in zip(dataset.samples, flags, strict=True) if s.pitfall]
    negatives = [bool(f) for s, f in zip(dataset.samples, flags, strict=True) if not s.pitfall]
    recall = sum(positives) / len(positives) if positives else float("nan")
    false = sum(negatives) / len(negatives) if negatives else float("nan")
    return recall, false


def out_of_fold(rows: Rows) -> np.ndarray:
    """Each row's logit from a head fitted without its question (questions dealt into folds)."""
    questions = sorted(set(rows.question))
    fold_of = {q: i % FOLDS for i, q in enumerate(questions)}
    folds = np.array([fold_of[q] for q in rows.question])
    logits = np.zeros(len(rows.labels))
    for k in range(FOLDS):
        held = folds == k
        chosen = ~held & rows.train
        w, b = fit(rows.features[chosen], rows.labels[chosen])
        logits[held] = rows.features[held] @ w + b
    return logits


def threshold_for(
    dataset: Dataset, rows: Rows, logits: np.ndarray, target: float
) -> tuple[float, float, float]:
    """The lowest threshold whose false-flag rate is at most `target`: (threshold, recall, ff)."""
    count = len(dataset.samples)
    for threshold in np.arange(-4.0, 8.0, 0.05):
        recall, false = rates(dataset, flagged(rows, logits, float(threshold), count))
        if false <= target:
            return round(float(threshold), 2), recall, false
    return 8.0, 0.0, 0.0


def train_head(grader: Grader, bank: QuestionBank, dataset: Dataset, model: str) -> PitfallHead:
    rows = collect(grader, bank, dataset)
    logits = out_of_fold(rows)
    said = said_logits(rows.features, logits)
    flag_at, flag_recall, flag_false = threshold_for(dataset, rows, said, FLAG_TARGET)
    hinted = np.where(rows.features[:, REPORTED] > 0, -np.inf, logits)  # as by_head hints
    check_at, check_recall, check_false = threshold_for(dataset, rows, hinted, CHECK_TARGET)
    weights, bias = fit(rows.features[rows.train], rows.labels[rows.train])
    by_kind: dict[str, int] = defaultdict(int)
    for s in dataset.samples:
        by_kind[s.kind or "-"] += 1
    return PitfallHead(
        model=model,
        weights=tuple(round(float(w), 6) for w in weights),
        bias=round(bias, 6),
        flag_at=flag_at,
        check_at=min(check_at, flag_at),
        fitted_on=f"{dataset.name}: {len(dataset.samples)} answers, {len(rows.labels)} rows",
        figures={
            "oof_flag_recall": round(flag_recall, 3),
            "oof_flag_false": round(flag_false, 3),
            "oof_check_recall": round(check_recall, 3),
            "oof_check_false": round(check_false, 3),
        },
    )


def run_train(settings: Settings, bank: QuestionBank, model: str | None) -> int:
    """Fit on content/eval and content/heldout, print the out-of-fold figures (folds by
    question), write bot/scoring/heads/<model>.json."""
    if model:
        settings = settings.model_copy(update={"embedding_model": model})
    # The head being fitted is not used to compute its own features (and an old head's file
    # may no longer match them).
    options = replace(grader_options(settings), head=False)
    service = ScoringService.from_settings(settings, bank, options)
    grader = service.warm_grader()
    root = settings.content_dir.parent
    sets = [load_bank_eval(root / name) for name in ("eval", "heldout")]
    dataset = Dataset("content/eval + content/heldout", 10.0, [s for d in sets for s in d.samples])
    head = train_head(grader, bank, dataset, settings.embedding_model)
    path = head_path(settings.embedding_model)
    head.save(path)
    service.close()
    print(f"model: {settings.embedding_model}; {head.fitted_on}")
    print(
        "weights: "
        + ", ".join(f"{n} {w:+.3f}" for n, w in zip(FEATURES, head.weights, strict=True))
    )
    print(f"flag at logit {head.flag_at}, worth checking at {head.check_at}")
    print(
        "out of fold (folds by question): " + ", ".join(f"{k} {v}" for k, v in head.figures.items())
    )
    print(f"wrote {path}")
    return 0
