"""`/progress`'s figures: a user's graded answers summed up per level and topic, the daily
streak and the latest answers. Pure (no Telegram, no plotting) apart from `load_progress`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.content.schema import Language, Level
from bot.services.history import HistoryRow, history

RECENT = 5


@dataclass(frozen=True)
class LevelProgress:
    level: Level
    answered: int  # distinct questions of the level with a graded answer
    total: int  # questions of the level in the bank


@dataclass(frozen=True)
class TopicProgress:
    topic: str  # the bank's id; bot.i18n.topic_name gives its name
    mastery: float  # 0-10: mean over the topic's answered questions of each one's latest score
    answered: int
    total: int


@dataclass(frozen=True)
class RecentAnswer:
    question_id: str
    question: str  # in the user's language, as history() gave it
    score: float
    when: datetime


@dataclass(frozen=True)
class ProgressSummary:
    points: tuple[tuple[datetime, float], ...]  # every graded answer, oldest first
    levels: tuple[LevelProgress, ...]  # junior, middle, senior
    topics: tuple[TopicProgress, ...]  # answered topics only, weakest first
    streak: int  # consecutive UTC days with a graded answer, ending today or yesterday
    recent: tuple[RecentAnswer, ...]  # the last RECENT graded answers, newest first
    total_answers: int

    @property
    def is_empty(self) -> bool:
        return self.total_answers == 0


def summarize(rows: Sequence[HistoryRow], bank: QuestionBank, today: date) -> ProgressSummary:
    # A retired question has no level or topics to count under, so its answers are left out;
    # quiz votes are recognition among four options, not graded answers.
    graded = sorted(
        (
            (r, r.score)
            for r in rows
            if r.score is not None and not r.is_vote and r.question_id in bank.questions
        ),
        key=lambda pair: pair[0].when,
    )
    latest = {r.question_id: score for r, score in graded}  # oldest first: the latest wins

    levels = tuple(
        LevelProgress(
            level=level,
            answered=sum(1 for q in bank.by_level(level) if q.id in latest),
            total=len(bank.by_level(level)),
        )
        for level in Level
    )

    totals: dict[str, int] = {}
    scores: dict[str, list[float]] = {}
    for question in bank:
        for topic in question.topics:
            totals[topic] = totals.get(topic, 0) + 1
            if question.id in latest:
                scores.setdefault(topic, []).append(latest[question.id])
    topics = sorted(
        (
            TopicProgress(topic, sum(s) / len(s), answered=len(s), total=totals[topic])
            for topic, s in scores.items()
        ),
        key=lambda p: (p.mastery, p.topic),
    )

    return ProgressSummary(
        points=tuple((r.when, score) for r, score in graded),
        levels=levels,
        topics=tuple(topics),
        streak=_streak({r.when.astimezone(UTC).date() for r, _ in graded}, today),
        recent=tuple(
            RecentAnswer(r.question_id, r.question, score, r.when)
            for r, score in reversed(graded[-RECENT:])
        ),
        total_answers=len(graded),
    )


def _streak(days: set[date], today: date) -> int:
    # Not answering yet today does not break the streak: it still counts until tomorrow.
    day = today if today in days else today - timedelta(days=1)
    streak = 0
    while day in days:
        streak += 1
        day -= timedelta(days=1)
    return streak


async def load_progress(
    sessions: async_sessionmaker[AsyncSession],
    bank: QuestionBank,
    user_id: int,
    lang: Language,
    today: date,
) -> ProgressSummary:
    return summarize(await history(sessions, bank, user_id, lang), bank, today)
