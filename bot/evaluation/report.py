"""Runs a grader over a labelled data set and prints the figures `eval` promises."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from bot.evaluation.datasets import Dataset, Sample
from bot.evaluation.metrics import loqo_rmse, pearson, pitfall_rates, spearman

# What a grader returns for one sample: the 0-10 score and the ids of flagged pitfalls.
Grading = tuple[float, set[str]]
GradeFn = Callable[[list[Sample]], list[Grading]]

NO_ANSWER_KINDS = ("offtopic", "dontknow")
GENERIC_KINDS = ("vague",)


@dataclass(frozen=True)
class Figures:
    n: int
    pearson: float
    spearman: float
    rmse: float  # on the human scale, after the leave-one-question-out monotone map
    pitfalls: dict[str, float] | None
    max_off_topic: float | None
    max_generic: float | None

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items()}


def figures(samples: list[Sample], gradings: list[Grading]) -> Figures:
    scores = [g[0] for g in gradings]
    human = [s.grade for s in samples]
    groups = [s.group for s in samples]
    has_kinds = any(s.kind for s in samples)
    pitfalls = None
    if any(s.pitfall or s.rejects for s in samples):
        pitfalls = pitfall_rates(
            [g[1] for g in gradings], [s.pitfall for s in samples], [s.rejects for s in samples]
        )

    def worst(kinds: tuple[str, ...]) -> float | None:
        chosen = [g[0] for s, g in zip(samples, gradings, strict=True) if s.kind in kinds]
        return max(chosen) if chosen else None

    return Figures(
        n=len(samples),
        pearson=pearson(scores, human),
        spearman=spearman(scores, human),
        rmse=loqo_rmse(scores, human, groups),
        pitfalls=pitfalls,
        max_off_topic=worst(NO_ANSWER_KINDS) if has_kinds else None,
        max_generic=worst(GENERIC_KINDS) if has_kinds else None,
    )


def evaluate(dataset: Dataset, grade: GradeFn) -> dict[str, Figures]:
    """Figures for all answers and per language."""
    gradings = grade(dataset.samples)
    result = {"all": figures(dataset.samples, gradings)}
    for lang in sorted({s.lang for s in dataset.samples}):
        chosen = [i for i, s in enumerate(dataset.samples) if s.lang == lang]
        if len(chosen) < len(dataset.samples):
            result[lang] = figures(
                [dataset.samples[i] for i in chosen], [gradings[i] for i in chosen]
            )
    return result


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def table(dataset: Dataset, results: dict[str, dict[str, Figures]]) -> str:
    """results: grader name -> subset -> figures."""
    lines = [
        f"{dataset.name}: {len(dataset.samples)} answers, human grades 0-{dataset.scale:g}",
        f"{'grader':12} {'subset':6} {'n':>5} {'pearson':>8} {'spearman':>9} {'rmse':>6} "
        f"{'pit.P':>6} {'pit.R':>6} {'false':>6} {'rej.fl':>7} {'offtop':>7} {'generic':>8}",
    ]
    for name, subsets in results.items():
        for subset, f in subsets.items():
            p = f.pitfalls or {}
            rejects = f"{p['rejects_flagged']}/{p['rejecting']}" if p else "-"
            lines.append(
                f"{name:12} {subset:6} {f.n:5d} {_fmt(f.pearson):>8} {_fmt(f.spearman):>9} "
                f"{_fmt(f.rmse, 2):>6} {_fmt(p.get('precision'), 2):>6} "
                f"{_fmt(p.get('recall'), 2):>6} {_fmt(p.get('false_flag_rate'), 2):>6} "
                f"{rejects:>7} {_fmt(f.max_off_topic, 1):>7} {_fmt(f.max_generic, 1):>8}"
            )
    lines.append(
        "rmse: after a monotone map fitted leave-one-question-out; pit.P/R: pitfall precision and "
        "recall; false: share of answers without a misconception that got a flag; rej.fl: answers "
        "rejecting a misconception that were flagged with it; offtop/generic: highest score (of "
        '10) given to an off-topic or "don\'t know" answer / a generic answer.'
    )
    return "\n".join(lines)
