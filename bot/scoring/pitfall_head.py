"""Whether a sentence asserts a documented misconception: a small fitted head per model.

Cosine with the wrong claim alone cannot separate "eval() disables gradients" from a correct
sentence about the same thing, so the decision weighs a few signals of one (sentence, pitfall)
pair: closeness to the claim and to its correction, the gap between them, closeness to any key
point (correct statements resemble key points), whether the polarity matches the claim's, the
shares of the claim's own words (those not in the correction) and of the correction's own words
that the sentence uses, and its length. A logistic regression over them is fitted by
`python -m bot train pitfalls` on `content/eval` and stored as a few numbers per model in
`bot/scoring/heads/`.

Two thresholds: at `flag_at` the grader says "you said this" (and takes points); at `check_at`,
lower, it only points at the pitfall as worth checking, with no penalty. A sentence whose
polarity differs from the claim's ("eval() does NOT disable gradients") is never said to hold
it, whatever its logit, and neither is a sentence without any of the pitfall's marker words
(the words that carry its wrong idea, in the bank) or one that reports the belief as others'
("many think …", "a common mistake is …"); at most it is worth checking (see
docs/grading.md for what each costs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.scoring.fitted_json import fitted_path, load_fitted, save_fitted

FEATURES = (
    "claim",  # calibrated cosine with the wrong claim (best of its two languages)
    "correction",  # with the correction
    "margin",  # claim - correction
    "key_point",  # with the closest key point of the question
    "same_polarity",  # 1 when negations/rejections agree with the claim's, else 0
    "claim_words",  # share of the claim's distinctive word stems found in the sentence
    "correction_words",  # the same for the correction's distinctive stems ("activations")
    "polar_claim",  # same_polarity * claim: closeness counts only when the stance agrees
    "log_length",  # log(1 + words in the sentence)
    "marker",  # 1 when the sentence has one of the pitfall's marker words (or it has none)
    "reported",  # 1 when it speaks of a belief as others' or as a mistake ("many think …")
)
SAME_POLARITY = FEATURES.index("same_polarity")
MARKER = FEATURES.index("marker")
REPORTED = FEATURES.index("reported")
HEADS_DIR = Path(__file__).with_name("heads")


@dataclass(frozen=True)
class PitfallHead:
    model: str
    weights: tuple[float, ...]
    bias: float
    flag_at: float  # logit at which a pitfall is shown as said
    check_at: float  # logit at which it is shown as worth checking
    fitted_on: str = ""
    figures: dict[str, float] = field(default_factory=dict)  # out-of-fold figures at fit time

    def logits(self, features: np.ndarray) -> np.ndarray:
        """features: (..., len(FEATURES)) -> (...)."""
        return features @ np.asarray(self.weights, dtype=np.float64) + self.bias

    def save(self, path: Path) -> None:
        save_fitted(self, FEATURES, path)

    @classmethod
    def load(cls, path: Path) -> PitfallHead:
        return cls(**load_fitted(path, FEATURES, "python -m bot train pitfalls"))


def said_logits(features: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """The logits a "you said this" flag may use: none where the polarity disagrees, none for a
    sentence without any of the pitfall's marker words, and none for one that reports the
    belief as others' or as a mistake."""
    allowed = (
        (features[..., SAME_POLARITY] > 0)
        & (features[..., MARKER] > 0)
        & (features[..., REPORTED] == 0)
    )
    return np.where(allowed, logits, -np.inf)


def head_path(model: str, directory: Path = HEADS_DIR) -> Path:
    return fitted_path(model, directory)


def load_head(model: str, directory: Path = HEADS_DIR) -> PitfallHead | None:
    """The head fitted for this model, or None (the grader then uses its fixed rule)."""
    path = head_path(model, directory)
    return PitfallHead.load(path) if path.exists() else None


def features(
    claim: np.ndarray,
    correction: np.ndarray,
    key_point: np.ndarray,
    same_polarity: np.ndarray,
    claim_words: np.ndarray,
    correction_words: np.ndarray,
    length: np.ndarray,
    marker: np.ndarray,
    reported: np.ndarray,
) -> np.ndarray:
    """Arrays of one shape (units, pitfalls) -> (units, pitfalls, len(FEATURES))."""
    return np.stack(
        [
            claim,
            correction,
            claim - correction,
            key_point,
            same_polarity,
            claim_words,
            correction_words,
            same_polarity * claim,
            np.log1p(length),
            marker,
            reported,
        ],
        axis=-1,
    ).astype(np.float64)
