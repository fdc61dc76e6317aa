"""The readiness estimate behind `/report`: per topic and level, a frequency-weighted average of
the user's latest scores (unanswered = 0) against the "good" bar, and what to practise next.

Pure functions over the bank and a question id -> latest score mapping; `load_readiness` reads
the scores from the user's history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.content.schema import Frequency, Language, Level, Question
from bot.services.history import HistoryRow, history

# A question interviewers ask almost always weighs three times one they ask sometimes.
WEIGHTS: Mapping[Frequency, int] = {
    Frequency.always: 3,
    Frequency.often: 2,
    Frequency.sometimes: 1,
}
BAR = 7.0  # the grader's "good" verdict
PRACTICE_COUNT = 3
LEVELS = tuple(Level)  # junior, middle, senior: lowest first
# Float sums may land a hair under the bar (6.9999999) for scores that average exactly 7.
_EPSILON = 1e-9


class Standing(StrEnum):
    ready = "ready"  # passed the bar at `level` and at every level below it
    below = "below"  # missed the bar at the topic's lowest level
    untried = "untried"  # no graded answer in the topic yet


@dataclass(frozen=True)
class LevelReadiness:
    level: Level
    score: float  # 0..10: Σ weight · latest score / Σ weight, unanswered = 0
    answered: int  # questions of this topic and level with a graded answer
    total: int

    @property
    def passed(self) -> bool:
        return self.score >= BAR - _EPSILON


@dataclass(frozen=True)
class TopicReadiness:
    topic: str
    status: Standing
    # ready: the highest level reached; below: the level whose bar was missed (the topic's
    # lowest); untried: None.
    level: Level | None
    levels: tuple[LevelReadiness, ...]  # only levels with questions in the topic, lowest first
    answered: int
    total: int

    def at(self, level: Level) -> LevelReadiness | None:
        return next((lr for lr in self.levels if lr.level == level), None)


@dataclass(frozen=True)
class PracticeItem:
    question: Question
    score: float | None  # the latest score; None: not answered yet
    priority: float  # weight · (10 − latest score), unanswered = 10
    follow_ups: tuple[Question, ...]  # what interviewers usually ask next


@dataclass(frozen=True)
class ReadinessReport:
    user_level: Level
    topics: tuple[TopicReadiness, ...]  # every topic of the bank, by id
    practice: tuple[PracticeItem, ...]  # at most PRACTICE_COUNT, most useful first
    answered: int  # bank questions with a graded answer
    total: int  # bank questions

    def with_status(self, status: Standing) -> list[TopicReadiness]:
        return [topic for topic in self.topics if topic.status == status]


def latest_scores(rows: Iterable[HistoryRow]) -> dict[str, float]:
    """Question id -> the score of the user's most recent graded answer to it (ungraded rows
    and quiz votes are skipped; on equal times the later row wins)."""
    latest: dict[str, tuple[datetime, float]] = {}
    for row in rows:
        # A lucky or careless click among four options says little about what one can explain.
        if row.score is None or row.is_vote:
            continue
        seen = latest.get(row.question_id)
        if seen is None or row.when >= seen[0]:
            latest[row.question_id] = (row.when, row.score)
    return {question_id: score for question_id, (_, score) in latest.items()}


def weight(question: Question) -> int:
    return WEIGHTS[question.frequency]


def _level_readiness(
    level: Level, questions: list[Question], latest: Mapping[str, float]
) -> LevelReadiness:
    total_weight = sum(weight(q) for q in questions)
    earned = sum(weight(q) * latest.get(q.id, 0.0) for q in questions)
    answered = sum(1 for q in questions if q.id in latest)
    return LevelReadiness(level, earned / total_weight, answered, len(questions))


def _topic(topic: str, questions: list[Question], latest: Mapping[str, float]) -> TopicReadiness:
    levels = tuple(
        _level_readiness(level, in_level, latest)
        for level in LEVELS
        if (in_level := [q for q in questions if q.level == level])
    )
    answered = sum(lr.answered for lr in levels)
    total = sum(lr.total for lr in levels)
    if answered == 0:
        return TopicReadiness(topic, Standing.untried, None, levels, answered, total)
    reached: Level | None = None
    for lr in levels:  # lowest first: a level counts only if every level below it passed
        if not lr.passed:
            break
        reached = lr.level
    if reached is None:
        return TopicReadiness(topic, Standing.below, levels[0].level, levels, answered, total)
    return TopicReadiness(topic, Standing.ready, reached, levels, answered, total)


def _practice(
    bank: QuestionBank, latest: Mapping[str, float], user_level: Level
) -> tuple[PracticeItem, ...]:
    cap = LEVELS.index(user_level)
    items = []
    for q in bank:
        if LEVELS.index(q.level) > cap:
            continue
        score = latest.get(q.id)
        priority = weight(q) * (10.0 - (0.0 if score is None else score))
        if priority <= 0:  # a perfect 10: nothing to gain
            continue
        follow_ups = tuple(f for fid in q.follow_ups if (f := bank.get(fid)) is not None)
        items.append(PracticeItem(q, score, priority, follow_ups))
    items.sort(key=lambda i: (-i.priority, LEVELS.index(i.question.level), i.question.id))
    return tuple(items[:PRACTICE_COUNT])


def readiness(
    bank: QuestionBank, latest: Mapping[str, float], user_level: Level | str
) -> ReadinessReport:
    """`latest`: question id -> latest score (`latest_scores`); ids not in the bank are ignored.
    `user_level` caps the practise-next list (its level and below)."""
    level = Level(user_level)
    by_topic: dict[str, list[Question]] = {}
    for q in bank:
        for topic in q.topics:
            by_topic.setdefault(topic, []).append(q)
    topics = tuple(_topic(topic, by_topic[topic], latest) for topic in sorted(by_topic))
    return ReadinessReport(
        user_level=level,
        topics=topics,
        practice=_practice(bank, latest, level),
        answered=sum(1 for q in bank if q.id in latest),
        total=len(bank),
    )


async def load_readiness(
    sessions: async_sessionmaker[AsyncSession],
    bank: QuestionBank,
    user_id: int,
    lang: Language,
    user_level: Level,
) -> ReadinessReport:
    rows = await history(sessions, bank, user_id, lang)
    return readiness(bank, latest_scores(rows), user_level)
