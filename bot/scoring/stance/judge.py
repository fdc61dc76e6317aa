"""Which misconceptions an answer states, by the stance model: the bi-encoder shortlists
(sentence, claim) pairs, and the pair model reads each shortlisted pair whole.

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

# Calibrated cosine (see Grader) with the claim below which a sentence is not read at all: a
# sentence that far from the claim's subject neither asserts nor rejects it.
STANCE_FLOOR = 0.35
SHORTLIST = 2  # sentences read per pitfall, the closest to its claim first


class PairModel(Protocol):
    @property
    def flag_at(self) -> float: ...

    @property
    def check_at(self) -> float: ...

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


@dataclass(frozen=True)
class Candidates:
    """One answer's shortlisted pairs: (sentence index, pitfall index) and the claim text."""

    pairs: list[tuple[int, int]]
    claims: list[str]


def shortlist(
    question: Question,
    sentences: Sequence[str],
    claim_sims: np.ndarray,
    floor: float = STANCE_FLOOR,
) -> Candidates:
    """claim_sims: (sentences, pitfalls) calibrated cosines."""
    pairs: list[tuple[int, int]] = []
    claims: list[str] = []
    if not sentences:
        return Candidates(pairs, claims)
    langs = [detect_language(s) for s in sentences]
    for j, pitfall in enumerate(question.pitfalls):
        ranked = np.argsort(-claim_sims[: len(sentences), j])[:SHORTLIST]
        for i in ranked:
            if claim_sims[i, j] >= floor:
                pairs.append((int(i), j))
                claims.append(pitfall.claim.get(langs[i]))
    return Candidates(pairs, claims)


def read_all(
    model: PairModel, answers: Sequence[tuple[Sequence[str], Candidates]]
) -> list[np.ndarray]:
    """P(asserts) of every shortlisted pair of every answer, in one model call."""
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
    candidates: Candidates,
    asserts: np.ndarray,
    claim_sims: np.ndarray,
) -> tuple[list[PitfallHit], list[PitfallHit]]:
    """Per pitfall, its most likely sentence: said (P(asserts) at flag_at) or worth checking
    (at check_at). One verdict per sentence: a sentence said to hold one misconception is not
    also hinted at for another."""
    best: dict[int, tuple[float, int]] = {}
    for (i, j), p in zip(candidates.pairs, asserts, strict=True):
        if j not in best or p > best[j][0]:
            best[j] = (float(p), i)
    said: list[PitfallHit] = []
    maybe: list[tuple[int, float, int]] = []
    for j, (p, i) in sorted(best.items()):
        if p >= model.flag_at:
            said.append(_hit(question, j, i, p, sentences, claim_sims))
        elif p >= model.check_at:
            maybe.append((j, p, i))
    accused = {hit.evidence for hit in said}
    checks = [
        _hit(question, j, i, p, sentences, claim_sims)
        for j, p, i in maybe
        if sentences[i] not in accused
    ]
    return said, checks


def _hit(
    question: Question,
    j: int,
    i: int,
    probability: float,
    sentences: Sequence[str],
    claim_sims: np.ndarray,
) -> PitfallHit:
    return PitfallHit(
        question.pitfalls[j].id,
        round(float(claim_sims[i, j]), 3),
        sentences[i],
        probability=round(probability, 3),
    )
