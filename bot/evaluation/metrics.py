"""Correlations, leave-one-question-out monotone calibration, pitfall detection rates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    a, b = np.asarray(x, float), np.asarray(y, float)
    if len(a) < 2 or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank (as Spearman's rho needs)."""
    v = np.asarray(values, float)
    order = np.argsort(v, kind="mergesort")
    result = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        result[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return result


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    return pearson(ranks(x), ranks(y))


def isotonic_fit(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Pool-adjacent-violators: the non-decreasing step function closest to y (least squares).

    Returns the knots (x, fitted y) to interpolate between.
    """
    order = np.argsort(np.asarray(x, float), kind="mergesort")
    xs, ys = np.asarray(x, float)[order], np.asarray(y, float)[order]
    blocks: list[list[float]] = []  # [sum of y, count, first x, last x]
    for xv, yv in zip(xs, ys, strict=True):
        blocks.append([yv, 1.0, xv, xv])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            total, count, _, last = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
            blocks[-1][3] = last
    knots_x, knots_y = [], []
    for total, count, first, last in blocks:
        knots_x += [first, last]
        knots_y += [total / count, total / count]
    return np.array(knots_x), np.array(knots_y)


def isotonic_predict(knots: tuple[np.ndarray, np.ndarray], x: Sequence[float]) -> np.ndarray:
    return np.interp(np.asarray(x, float), knots[0], knots[1])


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
