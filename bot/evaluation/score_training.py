"""`python -m bot train score`: fit the score model (bot/scoring/score_model.py) on the human
grades of the spent labelled sets, and report how it ranks each set when that set is left out
of the fit, beside the hand-set formula's figures on the same set.

Never a blind set not read yet: each is read once, for a published figure, and joins the fit
after (blind10, blind11 and blind12 gave the ninth to eleventh attempts'). Nor
content/eval: written first, with another mix (a sixth each of six kinds, "vague" answers among
them), and tuned on since; added to the fit, it lowered every other set's left-out figure
(docs/grading.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import READ_ON, Dataset, load_bank_eval
from bot.evaluation.runner import grade_bank_samples
from bot.scoring.grader import Grader
from bot.scoring.score_model import ScoreModel, fit, weights_path
from bot.scoring.service import ScoringService, grader_options

# Every numbered blind set once read (READ_ON, the one record of that): a set read joins the fit.
FIT_SETS = ("heldout", "blind", *(f"blind{n}" for n in sorted(READ_ON)))


@dataclass(frozen=True)
class Rows:
    """Per graded answer: the score model's features, the lowest cap, the formula's score, the
    human grade on 0-10, the set and the language."""

    features: np.ndarray
    ceilings: np.ndarray
    formula: np.ndarray
    grades: np.ndarray
    sets: np.ndarray
    russian: np.ndarray

    def take(self, mask: np.ndarray) -> Rows:
        return Rows(*(getattr(self, name)[mask] for name in Rows.__dataclass_fields__))


def graded_rows(
    grader: Grader, bank: QuestionBank, sets: list[Dataset], progress: bool = False
) -> Rows:
    """Every answer with sentences to grade (the rest score 0 whatever the model says)."""
    from tqdm import tqdm  # installed with sentence-transformers

    features, ceilings, formula, grades, names, russian = [], [], [], [], [], []
    total = sum(len(d.samples) for d in sets)
    bar = tqdm(total=total, desc="grading", unit="answer", disable=not progress)
    for dataset in sets:
        for sample, result in grade_bank_samples(grader, bank, dataset.samples):
            bar.update(1)
            if not result.features:
                continue
            features.append(result.features)
            ceilings.append(result.ceiling)
            formula.append(result.score)
            grades.append(sample.grade * 10 / dataset.scale)
            names.append(dataset.name)
            russian.append(result.language == "ru")
    bar.close()
    return Rows(
        np.asarray(features, dtype=np.float64),
        np.asarray(ceilings),
        np.asarray(formula),
        np.asarray(grades),
        np.asarray(names),
        np.asarray(russian),
    )


def scores(model: ScoreModel, rows: Rows) -> np.ndarray:
    """What the grader would give: the model's score, rounded, under the caps."""
    capped: np.ndarray = np.minimum(np.round(model.score(rows.features), 1), rows.ceilings)
    return capped


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return round(float(spearmanr(a, b).statistic), 3)


def left_out(rows: Rows, model_name: str) -> dict[str, dict[str, float]]:
    """Per set: Spearman with the human grades (all, Russian) of the formula and of a model
    fitted on the other sets."""
    figures = {}
    for name in dict.fromkeys(rows.sets.tolist()):
        held = rows.sets == name
        model = fit(rows.take(~held).features, rows.take(~held).grades, model_name)
        test = rows.take(held)
        fitted = scores(model, test)
        ru = test.russian
        figures[name] = {
            "answers": int(held.sum()),
            "formula": spearman(test.formula, test.grades),
            "fitted": spearman(fitted, test.grades),
            "formula_ru": spearman(test.formula[ru], test.grades[ru]),
            "fitted_ru": spearman(fitted[ru], test.grades[ru]),
        }
    return figures


def run_train_score(
    settings: Settings, bank: QuestionBank, model: str | None, rows_file: Path | None = None
) -> int:
    """`rows_file`: the graded answers' features, read from there when it exists, else written
    there (a refit with other features' directions then takes seconds, not a quarter hour)."""
    if model:
        settings = settings.model_copy(update={"embedding_model": model})
    # The model being fitted does not score its own training answers (and an old file may no
    # longer match the features).
    options = replace(grader_options(settings), fitted_score=False)
    service = ScoringService.from_settings(settings, bank, options)
    grader = service.warm_grader()
    if grader.stance is None or grader.relevance is None or grader.head is None:
        print(f"error: {settings.embedding_model} has no stance or relevance model to read")
        service.close()
        return 2
    root = settings.content_dir.parent
    sets = [load_bank_eval(root / name, name) for name in FIT_SETS]
    if rows_file is not None and rows_file.exists():
        with np.load(rows_file) as stored:
            rows = Rows(*(stored[name] for name in Rows.__dataclass_fields__))
        print(f"read {len(rows.grades)} graded answers from {rows_file}")
    else:
        started = time.perf_counter()
        rows = graded_rows(grader, bank, sets, progress=True)
        print(f"graded {len(rows.grades)} answers in {time.perf_counter() - started:.0f} s")
        if rows_file is not None:
            np.savez(rows_file, **{name: getattr(rows, name) for name in Rows.__dataclass_fields__})
    figures = left_out(rows, settings.embedding_model)
    for name, f in figures.items():
        print(
            f"{name:8s} {f['answers']:5.0f} answers, left out of the fit: Spearman "
            f"{f['fitted']:.3f} (formula {f['formula']:.3f}); Russian {f['fitted_ru']:.3f} "
            f"(formula {f['formula_ru']:.3f})"
        )
    fitted = fit(rows.features, rows.grades, settings.embedding_model)
    fitted = replace(
        fitted,
        fitted_on=" + ".join(f"content/{n}" for n in FIT_SETS) + f": {len(rows.grades)} answers",
        figures={f"{n}_left_out": f["fitted"] for n, f in figures.items()},
    )
    path: Path = weights_path(settings.embedding_model)
    fitted.save(path)
    service.close()
    print(f"wrote {path}")
    return 0
