"""The score out of 10: the hand-set formula's, half and half with a linear model fitted on
human grades.

The formula (key-point coverage and overall similarity, minus a fixed penalty per misconception)
weighs its signals by judgement. With the stance and relevance models there are more of them (how
sure the stance model is, how the answer reads beside its own and its closest other question),
and their best weights are an empirical question: `python -m bot train score` fits them by ridge
regression on the human grades of the spent labelled sets, each weight kept to the direction it
should have (SIGNS), and stores a few numbers per embedding model in `bot/scoring/score_weights/`.
The score is half the formula's and half the model's (FORMULA_SHARE). The caps (an answer to
another question, "I don't know", off topic, generic) still apply after it, and the feedback
still lists each key point covered or missed and each misconception said.

It is used only where it was fitted: the same embedding model, with the stance and relevance
models both present (their readings are among its features). Elsewhere the formula scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.scoring.fitted_json import fitted_path, load_fitted, save_fitted

# Each feature with the direction its weight may take (+1 raises the score, -1 lowers it, 0
# either): the fit keeps to it, so that covering another key point never lowers a score and
# saying a misconception never raises one, whatever the correlations among the features.
SIGNS = {
    "formula": 1,  # the hand-set formula's score, 0-10, before any cap
    "coverage": 1,  # weighted key-point credit, 0-1
    "covered": 1,  # share of the key points listed as covered
    "best_point": 1,  # the best single key point's credit
    "similarity": 1,  # the whole answer with the model answer (calibrated cosine)
    "relevance": 1,  # the closest of the answer's texts to any of the question's
    "said": -1,  # misconceptions said
    "said_p": -1,  # the stance model's highest P(asserts) among them (0 if none)
    "checks": -1,  # misconceptions shown as worth checking
    "other_p": -1,  # the relevance model's P(answers another question), 0 if not read
    "nearest_p": -1,  # the same, read with the closest other question, 0 if not read
    "lean": -1,  # how much closer the whole answer sits to another question than to its own
    "terms": 1,  # 1 if it names an identifier of a key point
    "named": 1,  # how many such identifiers it names
    "lexical": 1,  # share of its word stems found in the question's texts
    "russian": 0,  # 1 for an answer in Russian
}
# Not the answer's length: fitted with it, the model ranked the spent sets a little better, but
# padding an answer with filler raised its score (docs/grading.md, "Ninth attempt").
FEATURES = tuple(SIGNS)
# The score is this share of the formula's and the rest the fitted model's. Fitted alone, the
# model pulls every score towards the middle (a concise, complete answer got 6.4 where the
# formula gives 10); half and half ranked the spent sets within 0.002 of it (docs/grading.md).
FORMULA_SHARE = 0.5
WEIGHTS_DIR = Path(__file__).with_name("score_weights")


@dataclass(frozen=True)
class ScoreModel:
    model: str  # the embedding model it was fitted with
    mean: tuple[float, ...]  # per feature: standardisation
    scale: tuple[float, ...]
    weights: tuple[float, ...]  # on the standardised features
    bias: float
    formula_share: float = FORMULA_SHARE
    fitted_on: str = ""
    figures: dict[str, float] = field(default_factory=dict)  # cross-validated, at fit time

    def predict(self, features: np.ndarray) -> np.ndarray:
        """features: (..., len(FEATURES)) -> scores clipped to 0-10."""
        z = (features - np.asarray(self.mean)) / np.asarray(self.scale)
        scores: np.ndarray = np.clip(z @ np.asarray(self.weights) + self.bias, 0.0, 10.0)
        return scores

    def score(self, features: np.ndarray) -> np.ndarray:
        """The grade before the caps: the formula's score (the first feature) and the model's,
        weighed by `formula_share`."""
        share = self.formula_share
        blended: np.ndarray = share * features[..., 0] + (1 - share) * self.predict(features)
        return blended

    def save(self, path: Path) -> None:
        save_fitted(self, FEATURES, path)

    @classmethod
    def load(cls, path: Path) -> ScoreModel:
        return cls(**load_fitted(path, FEATURES, "python -m bot train score"))


def weights_path(model: str, directory: Path = WEIGHTS_DIR) -> Path:
    return fitted_path(model, directory)


def load_score_model(model: str, directory: Path = WEIGHTS_DIR) -> ScoreModel | None:
    """The score model fitted for this embedding model, or None (the formula scores)."""
    path = weights_path(model, directory)
    return ScoreModel.load(path) if path.exists() else None


def fit(
    features: np.ndarray,
    grades: np.ndarray,
    model: str,
    alpha: float = 1.0,
    signs: tuple[int, ...] = tuple(SIGNS.values()),
) -> ScoreModel:
    """Ridge regression of human grades (0-10) on standardised features, each weight kept to
    its sign in `signs` (0: free)."""
    from sklearn.linear_model import Ridge  # only `train score` fits

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale == 0] = 1.0
    z = (features - mean) / scale
    # Non-negative weights on features turned to their sign; a free one enters twice, as itself
    # and negated, so that either part can carry it.
    direction = np.array([s or 1 for s in signs], dtype=np.float64)
    free = [i for i, s in enumerate(signs) if s == 0]
    ridge = Ridge(alpha=alpha, positive=True).fit(np.hstack([z * direction, -z[:, free]]), grades)
    weights = ridge.coef_[: len(signs)] * direction
    weights[free] -= ridge.coef_[len(signs) :]
    return ScoreModel(
        model=model,
        mean=tuple(round(float(v), 6) for v in mean),
        scale=tuple(round(float(v), 6) for v in scale),
        weights=tuple(round(float(v), 6) for v in weights),
        bias=round(float(ridge.intercept_), 6),
    )
