"""What grading one answer gives: its score and verdict, each key point's credit and the words
that earned it, the misconceptions said and the hints. Plain data: the bot's services and the
feedback read it without loading the grader."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from bot.scoring.pitfalls import PitfallHit
from bot.verdicts import Verdict


@dataclass(frozen=True)
class PointResult:
    id: str
    covered: bool
    credit: float
    evidence: str | None


@dataclass(frozen=True)
class GradeResult:
    question_id: str
    language: str
    score: float
    verdict: Verdict
    points: list[PointResult] = field(default_factory=list)
    pitfalls: list[PitfallHit] = field(default_factory=list)
    # Close to a documented misconception, but not close enough to say so: shown as worth
    # checking, with no penalty.
    checks: list[PitfallHit] = field(default_factory=list)
    similarity: float = 0.0
    relevance: float = 0.0
    # The bank question this answer reads like an answer to, instead of its own.
    answers_question: str | None = None
    # What the score model reads (score_model.FEATURES), before any cap: for fitting it.
    features: tuple[float, ...] = ()
    ceiling: float = 10.0  # the lowest cap that applied (10: none)

    @property
    def covered(self) -> list[str]:
        return [p.id for p in self.points if p.covered]

    @property
    def missed(self) -> list[str]:
        return [p.id for p in self.points if not p.covered]

    def to_json(self) -> dict[str, object]:
        return {
            "question_id": self.question_id,
            "score": self.score,
            "verdict": self.verdict,
            "covered": self.covered,
            "missed": self.missed,
            "pitfalls": [asdict(p) for p in self.pitfalls],
            "worth_checking": [asdict(p) for p in self.checks],
            "language": self.language,
            "similarity": round(self.similarity, 3),
            "relevance": round(self.relevance, 3),
            "answers_question": self.answers_question,
            "evidence": {p.id: p.evidence for p in self.points if p.covered},
        }


def verdict_for(score: float) -> Verdict:
    if score >= 8.5:
        return Verdict.excellent
    if score >= 7.0:
        return Verdict.good
    if score >= 4.0:
        return Verdict.partial
    if score > 0:
        return Verdict.weak
    return Verdict.no_answer
