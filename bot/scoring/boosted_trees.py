"""Boosted trees fitted by scikit-learn (HistGradientBoosting*), stored as plain arrays and walked
with numpy, so that the bot needs no scikit-learn to read them. Shared by the score model
(bot/scoring/score_model.py) and the stance flag model (bot/scoring/stance/flag_model.py).

Every field has the same shape (trees, nodes): a node's feature (-1 at a leaf), its threshold (a
value at or below it goes left), its children, and a leaf's value. A prediction is the baseline
plus one leaf value per tree (for a classifier, the log-odds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Table = tuple[tuple[Any, ...], ...]
FIELDS = ("feature", "threshold", "left", "right", "value")
_KINDS = (np.int64, np.float64, np.int64, np.int64, np.float64)


def as_arrays(tables: tuple[Table, ...]) -> tuple[np.ndarray, ...]:
    """The five tables (in FIELDS order) as numpy arrays."""
    return tuple(np.asarray(t, dtype=k) for t, k in zip(tables, _KINDS, strict=True))


def leaf_sums(arrays: tuple[np.ndarray, ...], features: np.ndarray) -> np.ndarray:
    """features: (rows, features) -> (rows,) the sum of each row's leaf values over the trees."""
    feature, threshold, left, right, value = arrays
    rows = np.atleast_2d(features).astype(np.float64)
    trees = np.arange(feature.shape[0])
    node = np.zeros((rows.shape[0], feature.shape[0]), dtype=np.int64)
    for _ in range(feature.shape[1]):  # a tree is never deeper than its node count
        f = feature[trees, node]
        inner = f >= 0
        if not inner.any():
            break
        x = np.take_along_axis(rows, np.maximum(f, 0), axis=1)
        goes_left = x <= threshold[trees, node]
        node = np.where(inner, np.where(goes_left, left[trees, node], right[trees, node]), node)
    sums: np.ndarray = value[trees, node].sum(axis=1)
    return sums


def read_booster(booster: Any) -> tuple[float, dict[str, Any]]:
    """(baseline, the five tables by name) of a fitted HistGradientBoosting regressor or binary
    classifier. scikit-learn keeps the fitted trees in `_predictors` (one per boosting round); a
    test checks that these arrays predict what it does (tests/unit/test_score_model.py)."""
    nodes = [round_[0].nodes for round_ in booster._predictors]
    width = max(len(n) for n in nodes)

    def padded(name: str, leaf: Any, cast: Callable[[Any], Any]) -> Table:
        """One field of every tree's nodes, `leaf` where a leaf has none, padded to `width`."""
        out = []
        for n in nodes:
            column = [
                leaf if n["is_leaf"][i] and name != "value" else n[name][i] for i in range(len(n))
            ]
            out.append(tuple(cast(v) for v in column) + (cast(leaf),) * (width - len(n)))
        return tuple(out)

    def decimal(v: Any) -> float:
        return round(float(v), 6)

    tables = {
        "feature": padded("feature_idx", -1, int),
        "threshold": padded("num_threshold", 0.0, float),  # exact: a threshold can be a value
        "left": padded("left", 0, int),
        "right": padded("right", 0, int),
        "value": padded("value", 0.0, decimal),
    }
    return float(np.ravel(booster._baseline_prediction)[0]), tables
