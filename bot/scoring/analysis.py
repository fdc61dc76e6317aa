"""What the grader holds between its steps: a question's stored vectors, and one answer between
the model pass and its grade."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bot.content.schema import Question
from bot.scoring.pitfalls import PitfallHit
from bot.scoring.relevance import Neighbour

Prepared = tuple[Question, str, str, list[str]]  # question, normalised text, language, units


@dataclass(frozen=True)
class QuestionVectors:
    points: np.ndarray  # (2, k, d): languages x key points
    claims: np.ndarray  # (2, p, d)
    corrections: np.ndarray  # (2, p, d)
    context: np.ndarray  # (4, d): model answer ru/en, question ru/en
    vocabulary: frozenset[str]  # word stems of every text of the question
    # per pitfall: stems only the claim uses, stems only the correction uses
    pitfall_stems: tuple[tuple[frozenset[str], frozenset[str]], ...]


@dataclass
class Analysis:
    """One answer between the model pass and its grade: units, their vectors and similarities,
    and (with a stance model) its pitfall verdicts."""

    question: Question
    text: str
    language: str
    units: list[str]
    vectors: np.ndarray
    unit_langs: np.ndarray
    point_sims: np.ndarray  # (units, key points)
    claim_sims: np.ndarray  # (units, pitfalls)
    fix_sims: np.ndarray  # (units, pitfalls)
    matrix: np.ndarray | None = None  # the pitfall head's features, where it has a head
    stance: list[PitfallHit] | None = None  # the pitfalls said, with the stance model
    # those the flag model declined although P(asserts) alone said them (hints)
    stance_doubted: list[PitfallHit] = field(default_factory=list)
    stance_read: tuple[str, ...] = ()  # the sentences the stance model judged (not clauses)
    # (sentence, pitfall id) it read below its veto: very unlikely to assert that pitfall
    stance_vetoed: frozenset[tuple[str, str]] = frozenset()
    other_p: float | None = None  # the relevance model's P(other), where it has one
    neighbour: Neighbour | None = None  # how it compares with every bank question, if it does
    nearest_p: float | None = None  # P(other) read with the closest other question, if read
