"""The stance model as the pitfall head's second reader.

The head (bot/scoring/pitfalls.py) scores every (sentence, pitfall) pair from the bi-encoder's
signals and says "you said this" at its own threshold, but only on a sentence that shares a
marker word with the claim and the claim's polarity: an assertion in a candidate's own words
("you can just skip the division, torch averages for you") often has neither. So the head
shortlists, by its raw logit before those gates, up to PER_PITFALL sentences per pitfall, and the
pair model, reading the claim and the sentence together, decides: a pitfall is said when one of
them asserts it at `flag_at`. The head's own flags stay, and every flag carries the pair
model's P(asserts). Where a flag model was fitted beside the stance model (flag_model.py), it
decides instead of P(asserts) at `flag_at`, reading more of what the grader knows of the same
candidates.

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
from bot.scoring.stance.flag_model import CandidateReading, FlagModel, features
from bot.scoring.text import detect_language

PER_PITFALL = 2  # sentences read per pitfall: the head's best by raw logit


class PairModel(Protocol):
    @property
    def flag_at(self) -> float: ...  # P(asserts) that says "you said this"

    @property
    def head_floor(self) -> float: ...  # the head's lowest raw logit the pair model reads

    @property
    def veto(self) -> float: ...  # P(asserts) below which the head's own flag is dropped

    @property
    def flags(self) -> FlagModel | None: ...  # decides instead of flag_at, where fitted

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


@dataclass(frozen=True)
class Candidate:
    sentence: int
    pitfall: int
    claim: str  # in the sentence's language
    logit: float  # the head's raw logit for the pair
    said: float  # the head's logit where it may say "you said this", -inf elsewhere


def candidates(
    question: Question,
    sentences: Sequence[str],
    raw: np.ndarray,
    said: np.ndarray,
    floor: float,
    per_pitfall: int = PER_PITFALL,
) -> list[Candidate]:
    """raw, said: (sentences, pitfalls) the head's logits, before and after its gates
    (bot/scoring/pitfall_head.said_logits). Per pitfall, its best `per_pitfall` sentences by
    raw logit at `floor` or more, and the head's own best sentence where it reaches `floor`."""
    found: list[Candidate] = []
    for j, pitfall in enumerate(question.pitfalls):
        if not len(sentences):
            break
        best = [int(i) for i in np.argsort(-raw[:, j], kind="stable")[:per_pitfall]]
        head = int(np.argmax(said[:, j]))
        chosen = [i for i in best if raw[i, j] >= floor]
        if said[head, j] >= floor and head not in chosen:
            chosen.append(head)
        found += [
            Candidate(
                i,
                j,
                pitfall.claim.get(detect_language(sentences[i])),
                float(raw[i, j]),
                float(said[i, j]),
            )
            for i in chosen
        ]
    return found


def read_all(
    model: PairModel, answers: Sequence[tuple[Sequence[str], list[Candidate]]]
) -> list[np.ndarray]:
    """The probabilities (candidates, labels) of every candidate of every answer, in one model
    call."""
    flat = [(c.claim, sentences[c.sentence]) for sentences, found in answers for c in found]
    probabilities = model.probabilities(flat) if flat else np.zeros((0, 3))
    result, start = [], 0
    for _, found in answers:
        result.append(probabilities[start : start + len(found)])
        start += len(found)
    return result


def head_flag(
    mine: Sequence[tuple[Candidate, float]], head_flag_at: float, veto: float
) -> tuple[Candidate, float] | None:
    """The head's own flag among one pitfall's (candidate, P(asserts)): its best sentence by
    gated logit, where that reaches `head_flag_at` and the pair model does not read it below
    `veto`; else None."""
    best, p = max(mine, key=lambda item: item[0].said)
    return (best, p) if best.said >= head_flag_at and p >= veto else None


@dataclass(frozen=True)
class Verdicts:
    said: list[PitfallHit]  # "you said this"
    # Where a flag model decides: the pitfalls it declined although the pair model alone would
    # have said them (a candidate at `flag_at` or more). Too sure a reading to stay silent
    # about, too doubtful to be a verdict: shown as "worth checking", with that sentence,
    # which is then never quoted as covering a key point (an answer saying `pin_memory=True`
    # puts batches on the GPU had that sentence quoted under the pin_memory key point:
    # docs/grading.md, twenty-fourth attempt).
    doubted: list[PitfallHit]


def verdicts(
    model: PairModel,
    question: Question,
    sentences: Sequence[str],
    found: list[Candidate],
    asserts: np.ndarray,
    head_flag_at: float,
    claim_sims: np.ndarray,
    read: Sequence[CandidateReading] | None = None,
) -> Verdicts:
    """The pitfalls said: those whose candidate the pair model finds asserted at
    `model.flag_at` (quoting that sentence), and those the head says (with the pair model's
    probability for the head's sentence) unless the pair model reads that sentence below
    `model.veto`. With `read` (what the grader read of each candidate) and a flag model, the
    flag model decides instead of `flag_at`, and what it declines at `flag_at` is doubted."""
    said: list[PitfallHit] = []
    doubted: list[PitfallHit] = []
    decides = model.flags is not None and read is not None
    for j, pitfall in enumerate(question.pitfalls):
        mine = [(c, float(p)) for c, p in zip(found, asserts, strict=True) if c.pitfall == j]
        if not mine:
            continue
        best, p = max(mine, key=lambda item: item[1])
        if model.flags is not None and read is not None:
            rows = [r for c, r in zip(found, read, strict=True) if c.pitfall == j]
            hit = model.flags.probabilities(features(rows))[0] >= model.flags.flag_at
        else:
            hit = p >= model.flag_at
        if hit:
            said.append(_hit(pitfall.id, best, j, p, sentences, claim_sims))
        elif (own := head_flag(mine, head_flag_at, model.veto)) is not None:
            said.append(_hit(pitfall.id, own[0], j, own[1], sentences, claim_sims))
        elif decides and p >= model.flag_at:
            doubted.append(_hit(pitfall.id, best, j, p, sentences, claim_sims))
    return Verdicts(said, doubted)


def _hit(
    pitfall: str,
    best: Candidate,
    j: int,
    p: float,
    sentences: Sequence[str],
    claim_sims: np.ndarray,
) -> PitfallHit:
    """Pitfall `pitfall` (the question's j-th) found in `best`'s sentence, at P(asserts) p."""
    return PitfallHit(
        pitfall,
        round(float(claim_sims[best.sentence, j]), 3),
        sentences[best.sentence],
        probability=round(p, 3),
    )
