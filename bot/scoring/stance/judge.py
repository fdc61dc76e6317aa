"""The stance model as the second reader of the pitfall head's candidates.

The head (bot/scoring/pitfalls.py) scores every (sentence, pitfall) pair from the bi-encoder's
signals and says "you said this" at its own threshold. Measured on the tuning sets, the stance
model alone was less precise than the head (docs/stance-model.md), but the two disagree in useful
places: a sentence the head finds close to a claim, but not close enough to say so, is said to
hold it when the stance model, reading the claim and the sentence together, is confident that it
asserts it. So the head shortlists, the pair model decides on its near misses, and every flag
carries the pair model's P(asserts).

A sentence, not a clause, is what the model reads: "many think X, but that is wrong" split at
"but" leaves a clause "many think X" that, alone, is ambiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from bot.content.schema import Question
from bot.scoring.pitfalls import PitfallHit
from bot.scoring.stance.model import ASSERTS
from bot.scoring.text import detect_language


class PairModel(Protocol):
    @property
    def flag_at(self) -> float: ...  # P(asserts) that turns a near miss into "said"

    @property
    def head_floor(self) -> float: ...  # the head's lowest logit the pair model reads

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


@dataclass(frozen=True)
class Candidates:
    """One answer's pairs for the pair model: (sentence, pitfall) indices, the claim in the
    sentence's language, and the head's logit for the pair."""

    pairs: list[tuple[int, int]]
    claims: list[str]
    logits: list[float]


def candidates(
    question: Question, sentences: Sequence[str], said: np.ndarray, floor: float
) -> Candidates:
    """said: (sentences, pitfalls) the head's logits where a "said" flag is allowed (-inf
    elsewhere: bot/scoring/pitfall_head.said_logits). Per pitfall, its best sentence if that
    reaches `floor`."""
    pairs: list[tuple[int, int]] = []
    claims: list[str] = []
    logits: list[float] = []
    for j, pitfall in enumerate(question.pitfalls):
        if not len(sentences):
            break
        i = int(np.argmax(said[: len(sentences), j]))
        if said[i, j] >= floor:
            pairs.append((i, j))
            claims.append(pitfall.claim.get(detect_language(sentences[i])))
            logits.append(float(said[i, j]))
    return Candidates(pairs, claims, logits)


def read_all(
    model: PairModel, answers: Sequence[tuple[Sequence[str], Candidates]]
) -> list[np.ndarray]:
    """P(asserts) of every candidate pair of every answer, in one model call."""
    flat = [
        (claim, sentences[i])
        for sentences, c in answers
        for (i, _), claim in zip(c.pairs, c.claims, strict=True)
    ]
    probabilities = model.probabilities(flat)[:, ASSERTS] if flat else np.zeros(0)
    result, start = [], 0
    for _, c in answers:
        result.append(probabilities[start : start + len(c.pairs)])
        start += len(c.pairs)
    return result


def verdicts(
    model: PairModel,
    question: Question,
    sentences: Sequence[str],
    found: Candidates,
    asserts: np.ndarray,
    head_flag_at: float,
    claim_sims: np.ndarray,
) -> list[PitfallHit]:
    """The pitfalls said: those the head says (now with the pair model's probability), and its
    near misses that the pair model finds asserted at `model.flag_at`."""
    said: list[PitfallHit] = []
    for (i, j), logit, p in zip(found.pairs, found.logits, asserts, strict=True):
        if logit >= head_flag_at or p >= model.flag_at:
            said.append(
                PitfallHit(
                    question.pitfalls[j].id,
                    round(float(claim_sims[i, j]), 3),
                    sentences[i],
                    probability=round(float(p), 3),
                )
            )
    return said
