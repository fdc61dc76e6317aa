"""Correlations, leave-one-question-out monotone calibration, pitfall detection rates.

scipy and scikit-learn (the `train` extra) compute them: `eval` and `train` need it, the bot not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats
from sklearn.isotonic import IsotonicRegression


def _comparable(a: np.ndarray, b: np.ndarray) -> bool:
    # A constant column has no correlation: nan, rather than scipy's warning and nan.
    return len(a) >= 2 and bool(a.std() > 0) and bool(b.std() > 0)


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    a, b = np.asarray(x, float), np.asarray(y, float)
    return float(stats.pearsonr(a, b).statistic) if _comparable(a, b) else float("nan")


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho, ties sharing their average rank."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    return float(stats.spearmanr(a, b).statistic) if _comparable(a, b) else float("nan")


def isotonic_fit(x: Sequence[float], y: Sequence[float]) -> IsotonicRegression:
    """The non-decreasing step function closest to y (least squares), flat beyond the data."""
    return IsotonicRegression(increasing=True, out_of_bounds="clip").fit(
        np.asarray(x, float), np.asarray(y, float)
    )


def isotonic_predict(model: IsotonicRegression, x: Sequence[float]) -> np.ndarray:
    return np.asarray(model.predict(np.asarray(x, float)), float)


def loqo_rmse(scores: Sequence[float], human: Sequence[float], groups: Sequence[str]) -> float:
    """RMSE of a monotone map from scores to human grades, fitted without the answer's question."""
    s, h, g = np.asarray(scores, float), np.asarray(human, float), np.asarray(groups)
    predicted = np.empty(len(s))
    for group in np.unique(g):
        held = g == group
        if held.all():
            return float("nan")
        predicted[held] = isotonic_predict(isotonic_fit(s[~held], h[~held]), s[held])
    return float(np.sqrt(np.mean((predicted - h) ** 2)))


def pitfall_rates(
    flagged: Sequence[set[str]], expected: Sequence[str | None], rejected: Sequence[str | None]
) -> dict[str, float]:
    """Precision and recall of flags, and the false-flag rate on answers with no misconception.

    An answer that explicitly rejects a misconception counts as one that must not be flagged.
    """
    true_flags = all_flags = positives = hits = negatives = false_flags = rejecting = 0
    rejected_flagged = 0
    for flags, want, rejects in zip(flagged, expected, rejected, strict=True):
        all_flags += len(flags)
        if want is not None:
            positives += 1
            hits += want in flags
            true_flags += want in flags
        else:
            negatives += 1
            false_flags += bool(flags)
        if rejects is not None:
            rejecting += 1
            rejected_flagged += rejects in flags
    return {
        "precision": true_flags / all_flags if all_flags else float("nan"),
        "recall": hits / positives if positives else float("nan"),
        "false_flag_rate": false_flags / negatives if negatives else float("nan"),
        "positives": positives,
        "negatives": negatives,
        "rejects_flagged": rejected_flagged,
        "rejecting": rejecting,
    }
