"""Training the stance model: the pair classifiers' loop (bot/scoring/pairnet/training.py) and
figures by the stance labels."""

from __future__ import annotations

from typing import Any

import numpy as np

from bot.content.stance import LABELS
from bot.scoring.pairnet.training import TrainOptions, TrainReport, machine, train
from bot.scoring.pairnet.training import classification as _classification

__all__ = ["TrainOptions", "TrainReport", "classification", "machine", "train"]


def classification(labels: np.ndarray, predicted: np.ndarray) -> dict[str, Any]:
    """Per-class precision, recall and F1, and the confusion matrix (rows: true labels)."""
    return _classification(labels, predicted, LABELS)
