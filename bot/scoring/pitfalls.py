"""Which documented misconceptions an answer states: per sentence, by a fitted head or a rule.

Works on calibrated similarities the grader has already computed, (units, pitfalls); the last
unit of a multi-sentence answer is the whole answer, which mixes every statement, so pitfalls are
judged on the sentences and clauses only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bot.content.schema import Markers, Pitfall, Question
from bot.scoring.pitfall_head import FEATURES, REPORTED, PitfallHead, features, said_logits
from bot.scoring.text import detect_language, polarity, reports_belief, stems, words

_TOKEN = re.compile(r"[\w']+")
PITFALL_THRESHOLD = 0.70
PITFALL_MARGIN = 0.03  # a sentence this much closer to the correction than the claim is not a hit


@dataclass(frozen=True)
class PitfallHit:
    id: str
    similarity: float
    evidence: str
    # The stance model's P(asserts) for the evidence; None where the pitfall head decided.
    probability: float | None = None


def distinct_stems(question: Question) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """Per pitfall: the word stems only its claim uses, and those only its correction uses."""
    result = []
    for p in question.pitfalls:
        claim = stems(f"{p.claim.ru} {p.claim.en}")
        correction = stems(f"{p.correction.ru} {p.correction.en}")
        result.append((frozenset(claim - correction), frozenset(correction - claim)))
    return tuple(result)


def candidate_count(units: list[str]) -> int:
    return len(units) - 1 if len(units) > 1 else len(units)


def unit_features(
    question: Question,
    units: list[str],
    distinct: tuple[tuple[frozenset[str], frozenset[str]], ...],
    claim_sims: np.ndarray,
    fix_sims: np.ndarray,
    point_sims: np.ndarray,
) -> np.ndarray:
    """(candidate units, pitfalls, features) for the head; see bot/scoring/pitfall_head.py."""
    count = candidate_count(units)
    shape = (count, len(question.pitfalls))
    same = np.zeros(shape)
    shared = np.zeros(shape)
    corrective = np.zeros(shape)
    for i, unit in enumerate(units[:count]):
        ru = detect_language(unit) == "ru"
        own = stems(unit)
        stance = polarity(unit)
        for j, pitfall in enumerate(question.pitfalls):
            claim = pitfall.claim.ru if ru else pitfall.claim.en
            same[i, j] = float(stance == polarity(claim))
            claim_only, correction_only = distinct[j]
            shared[i, j] = _share(own, claim_only)
            corrective[i, j] = _share(own, correction_only)
    lengths = np.array([len(words(u)) for u in units[:count]], dtype=np.float64)
    joined = [_word_starts(u) for u in units[:count]]  # once per sentence, not per pitfall
    marked = np.array(
        [[float(_marked(starts, p)) for p in question.pitfalls] for starts in joined]
    ).reshape(shape)
    reported = np.array([float(reports_belief(u)) for u in units[:count]])
    best_point = point_sims[:count].max(axis=1, initial=0.0)
    return features(
        claim_sims[:count],
        fix_sims[:count],
        np.broadcast_to(best_point[:, None], shape),
        same,
        shared,
        corrective,
        np.broadcast_to(lengths[:, None], shape),
        marked,
        np.broadcast_to(reported[:, None], shape),
    ).reshape(*shape, len(FEATURES))


def has_marker(sentence: str, pitfall: Pitfall) -> bool:
    """Whether the sentence has one of the pitfall's markers (either language: people mix them);
    a marker is a word prefix, or several that must all start words of the sentence. True for a
    pitfall without markers."""
    return _marked(_word_starts(sentence), pitfall)


def _word_starts(sentence: str) -> str:
    """The sentence's words (lower-case), each after a space: a word starts with a marker part
    exactly when " " + part occurs in it, as no word or part holds a space (one substring test
    instead of one per word: the grader's hottest loop)."""
    return " " + " ".join(_TOKEN.findall(sentence.lower()))


def _marked(starts: str, pitfall: Pitfall) -> bool:
    if pitfall.markers is None:
        return True
    single, phrases = _marker_tests(pitfall.markers)
    if single is not None and single.search(starts):
        return True
    return any(all(part in starts for part in phrase) for phrase in phrases)


@lru_cache(maxsize=1024)
def _marker_tests(markers: Markers) -> tuple[re.Pattern[str] | None, tuple[tuple[str, ...], ...]]:
    """The markers of either language: the one-word ones as one pattern of " " + word starts,
    the phrases as the " " + part starts each needs."""
    parts = [m.split() for m in (*markers.ru, *markers.en)]
    words = [re.escape(f" {p[0]}") for p in parts if len(p) == 1]
    phrases = tuple(tuple(f" {part}" for part in p) for p in parts if len(p) > 1)
    return (re.compile("|".join(words)) if words else None), phrases


def _share(own: set[str] | frozenset[str], distinct: frozenset[str]) -> float:
    return len(own & distinct) / len(distinct) if distinct else 0.0


def by_head(
    head: PitfallHead, question: Question, units: list[str], matrix: np.ndarray
) -> tuple[list[PitfallHit], list[PitfallHit]]:
    """Per pitfall, its most likely sentence: said (at flag_at) or worth checking (check_at)."""
    said: list[PitfallHit] = []
    checks: list[PitfallHit] = []
    if matrix.size == 0:
        return said, checks
    logits = head.logits(matrix)
    said_only = said_logits(matrix, logits)
    for index, pitfall in enumerate(question.pitfalls):
        best = int(np.argmax(said_only[:, index]))
        if said_only[best, index] >= head.flag_at:
            said.append(_hit(pitfall, units, matrix, best, index))
    # A hint ("sounds like a common misconception") is not for a sentence that reports the
    # belief to reject it ("many think X, but …"), nor for one already said to hold another
    # misconception: one verdict per sentence.
    accused = {hit.evidence for hit in said}
    flagged = {hit.id for hit in said}
    rows = units[: matrix.shape[0]]  # the candidates: not the whole answer
    blocked = (matrix[..., REPORTED] > 0) | np.array([u in accused for u in rows])[:, None]
    hinted = np.where(blocked, -np.inf, logits)
    for index, pitfall in enumerate(question.pitfalls):
        best = int(np.argmax(hinted[:, index]))
        if pitfall.id not in flagged and hinted[best, index] >= head.check_at:
            checks.append(_hit(pitfall, units, matrix, best, index))
    return said, checks


def _hit(
    pitfall: Pitfall, units: list[str], matrix: np.ndarray, unit: int, index: int
) -> PitfallHit:
    """The pitfall found in `units[unit]`, with its claim cosine (feature 0)."""
    return PitfallHit(pitfall.id, round(float(matrix[unit, index, 0]), 3), units[unit])


def by_rule(
    question: Question,
    units: list[str],
    claim_sims: np.ndarray,
    fix_sims: np.ndarray,
    check_polarity: bool = True,
) -> list[PitfallHit]:
    """The fixed rule: the sentence closest to a claim, at PITFALL_THRESHOLD or more, unless its
    polarity differs from the claim's or it is closer to the correction."""
    hits: list[PitfallHit] = []
    candidates = candidate_count(units)
    for index, pitfall in enumerate(question.pitfalls):
        for unit_index in np.argsort(-claim_sims[:candidates, index]):
            sim = float(claim_sims[unit_index, index])
            if sim < PITFALL_THRESHOLD:
                break
            unit = units[unit_index]
            claim_text = pitfall.claim.ru if detect_language(unit) == "ru" else pitfall.claim.en
            # The closest statement decides the stance; its clauses do not get a second try.
            if check_polarity and polarity(unit) != polarity(claim_text):
                break  # the sentence denies the misconception
            if float(fix_sims[unit_index, index]) > sim + PITFALL_MARGIN:
                break  # closer to the correct statement than to the wrong one
            hits.append(PitfallHit(pitfall.id, round(sim, 3), unit))
            break
    return hits
