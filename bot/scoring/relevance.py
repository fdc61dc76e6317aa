"""Relevance against the whole bank: does an answer read like an answer to another question?

A fluent answer about DataParallel, given to a question about gradient accumulation, covers few
of its own question's key points but many of another's, and its whole text sits closer to that
other question's texts. The grader compares every answer with every bank question this way
(one matrix product over the bank's stored vectors) and caps an answer that clearly answers
another question (docs/grading.md, "Relevance").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from bot.content.schema import Question

# Chosen on the tuning sets (content/eval, content/heldout, content/blind) when the bank had 55
# questions. With 120, on heldout, blind, blind2 and blind3 the rule alone tells 123 of 154
# off-topic answers and 3 of 966 others (on content/eval, 22 of 930 others); the relevance
# model beside it (bot/scoring/relevance_net/judge.py) tells more and vetoes some.
NEIGHBOUR_OWN_MAX = 0.4  # coverage of its own question's key points, at most
NEIGHBOUR_WHOLE_MARGIN = 0.15  # closer to another question's texts than to its own, by this
NEIGHBOUR_COVERAGE = 0.3  # or: another question's key points covered at least this much,
NEIGHBOUR_COVERAGE_MARGIN = 0.25  # this much more than its own,
NEIGHBOUR_WHOLE_LEAN = 0.03  # and the whole answer at least this much closer to that one
ANOTHER_QUESTION_CAP = 1.5


class _Vectors(Protocol):
    @property
    def context(self) -> np.ndarray: ...  # (4, d): model answer ru/en, question ru/en

    @property
    def points(self) -> np.ndarray: ...  # (2, k, d): languages x key points


@dataclass(frozen=True)
class Neighbour:
    own_coverage: float  # of its own question's key points
    coverage: float  # the best coverage of another question's key points
    by_coverage: str  # that question
    whole_margin: float  # the whole answer's closeness to another question minus to its own
    by_whole: str  # that question

    def answered(self) -> str | None:
        """The other question this answer reads like an answer to, if it clearly does."""
        if self.own_coverage > NEIGHBOUR_OWN_MAX:
            return None
        if self.whole_margin >= NEIGHBOUR_WHOLE_MARGIN:
            return self.by_whole
        if (
            self.coverage >= NEIGHBOUR_COVERAGE
            and self.coverage - self.own_coverage >= NEIGHBOUR_COVERAGE_MARGIN
            and self.whole_margin >= NEIGHBOUR_WHOLE_LEAN
        ):
            return self.by_coverage
        return None


@dataclass(frozen=True)
class BankProfile:
    """Every bank question's model answer, wording and key points, both languages, stacked."""

    ids: list[str]
    vectors: np.ndarray  # (texts, d)
    owners: np.ndarray  # (texts,) the question of each text
    langs: np.ndarray  # (texts,) 0 ru, 1 en
    points: np.ndarray  # (texts,) the key point a text states (either language), -1 otherwise
    weights: np.ndarray  # (key points,)
    point_owners: np.ndarray  # (key points,) the question of each

    @property
    def count(self) -> int:
        return len(self.ids)

    @classmethod
    def build(
        cls, questions: Sequence[Question], vectors_of: Callable[[Question], _Vectors]
    ) -> BankProfile:
        rows: list[np.ndarray] = []
        owners: list[int] = []
        langs: list[int] = []
        points: list[int] = []
        weights: list[float] = []
        point_owners: list[int] = []
        for index, question in enumerate(questions):
            qv = vectors_of(question)
            k = qv.points.shape[1]
            rows += [qv.context, qv.points[0], qv.points[1]]
            owners += [index] * (4 + 2 * k)
            langs += [0, 1, 0, 1] + [0] * k + [1] * k
            first = len(weights)
            points += [-1] * 4 + [first + i for i in range(k)] * 2
            weights += [p.weight for p in question.key_points]
            point_owners += [index] * k
        return cls(
            [q.id for q in questions],
            np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32),
            np.array(owners),
            np.array(langs),
            np.array(points),
            np.array(weights),
            np.array(point_owners),
        )

    def compare(
        self, question_id: str, sims: np.ndarray, credit_ramp: tuple[float, float]
    ) -> Neighbour:
        """sims: (units, texts) calibrated cosines of the answer's units, the whole answer
        last. Coverage is the grade's (its credit ramp), without the identifier bonus."""
        floor, full = credit_ramp
        whole = np.full(self.count, -np.inf)
        np.maximum.at(whole, self.owners, sims[-1])
        is_point = self.points >= 0
        best = np.full(len(self.weights), -np.inf)
        np.maximum.at(best, self.points[is_point], sims[:, is_point].max(axis=0))
        credit = np.clip((best - floor) / (full - floor), 0.0, 1.0)
        covered = np.zeros(self.count)
        total = np.zeros(self.count)
        np.add.at(covered, self.point_owners, credit * self.weights)
        np.add.at(total, self.point_owners, self.weights)
        coverage = covered / np.maximum(total, 1e-9)
        own = self.ids.index(question_id)
        others = np.arange(self.count) != own
        by_coverage = int(np.argmax(np.where(others, coverage, -np.inf)))
        by_whole = int(np.argmax(np.where(others, whole, -np.inf)))
        return Neighbour(
            own_coverage=float(coverage[own]),
            coverage=float(coverage[by_coverage]),
            by_coverage=self.ids[by_coverage],
            whole_margin=float(whole[by_whole] - whole[own]),
            by_whole=self.ids[by_whole],
        )
