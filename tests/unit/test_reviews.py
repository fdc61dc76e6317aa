"""Spaced repetition (FSRS) with an injected clock: what comes back, when, and in what order."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from fsrs import Rating
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.services.interviews import AnswerOutcome, InterviewService, InterviewStart, ReviewNotDue
from bot.services.outbox import QuestionItem, SummaryItem
from bot.services.reviews import due_questions, next_due, rating_for, record_review
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import ReviewCard

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = T0):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def make(sessions, bank: QuestionBank, scoring: ScoringService, clock: Clock) -> InterviewService:
    return InterviewService(sessions, bank, scoring, random.Random(3), clock=clock)


async def deliver(service: InterviewService, user_id: int) -> list:
    items = await service.outbox(user_id)
    for index, item in enumerate(items):
        await service.mark_sent(item, 10_000 + index if isinstance(item, QuestionItem) else None)
    return items


def model_answer(bank: QuestionBank, question_id: str) -> str:
    question = bank.get(question_id)
    assert question is not None
    return question.answer.en


def test_rating_follows_the_verdict_bands() -> None:
    assert [rating_for(s) for s in (None, 0.0, 3.9, 4.0, 6.9, 7.0, 8.4, 8.5, 10.0)] == [
        Rating.Again,
        Rating.Again,
        Rating.Again,
        Rating.Hard,
        Rating.Hard,
        Rating.Good,
        Rating.Good,
        Rating.Easy,
        Rating.Easy,
    ]


async def test_a_bad_answer_comes_back_sooner_than_a_good_one(sessions) -> None:
    async with sessions() as session, session.begin():
        bad = await record_review(session, 1, "q-bad", 1.0, T0)
        good = await record_review(session, 1, "q-good", 9.0, T0)
        fair = await record_review(session, 1, "q-fair", 7.5, T0)
    # FSRS's first learning step: a failed question comes back within the same sitting.
    assert bad.due == T0 + timedelta(minutes=1)
    assert fair.due < good.due
    assert good.due - T0 >= timedelta(days=1)
    # A second failure keeps it short; a second success after the step moves it out by days.
    async with sessions() as session, session.begin():
        again = await record_review(session, 1, "q-bad", 0.0, T0 + timedelta(minutes=2))
        passed = await record_review(session, 1, "q-fair", 9.0, fair.due)
    assert again.due - (T0 + timedelta(minutes=2)) <= timedelta(minutes=10)
    assert (again.reviews, again.lapses) == (2, 2)
    assert passed.due - fair.due >= timedelta(days=1)


async def test_due_order_is_most_overdue_first(sessions) -> None:
    async with sessions() as session, session.begin():
        for qid, score, at in (
            ("a", 2.0, T0),  # due T0+1min
            ("b", 2.0, T0 - timedelta(hours=1)),  # due earliest
            ("c", 9.5, T0),  # due in days
        ):
            await record_review(session, 7, qid, score, at)
        await record_review(session, 8, "a", 2.0, T0 - timedelta(hours=5))  # another user
    async with sessions() as session:
        due = await due_questions(session, 7, T0 + timedelta(minutes=5))
        assert list(due) == ["b", "a"]
        assert await due_questions(session, 7, T0 - timedelta(hours=2)) == {}
        assert list(await due_questions(session, 7, T0 + timedelta(days=60))) == ["b", "a", "c"]
        upcoming = await next_due(session, 7, T0 + timedelta(minutes=5))
        assert upcoming is not None and upcoming > T0 + timedelta(days=1)


async def test_a_month_later_the_overdue_questions_come_first(
    sessions, bank: QuestionBank, scoring: ScoringService
) -> None:
    clock = Clock()
    service = make(sessions, bank, scoring, clock)
    await service.ensure_user(11, "en")
    result = await service.start(11, 11, "junior", 4)
    assert isinstance(result, InterviewStart)
    failed: list[str] = []
    items = await deliver(service, 11)
    for position in range(4):
        item = next(i for i in items if isinstance(i, QuestionItem))
        # Two answered well, two not known: only the latter must be first a month later.
        text = model_answer(bank, item.question.id) if position % 2 else "I don't know"
        if position % 2 == 0:
            failed.append(item.question.id)
        outcome, _ = await service.submit(11, 11, text)
        assert outcome is AnswerOutcome.graded
        clock.advance(minutes=1)
        items = await deliver(service, 11)
    clock.advance(days=30)
    # State is in the database: a new service (a restart) on the same database sees it.
    restarted = make(sessions, bank, scoring, clock)
    await restarted.start(11, 11, "junior", 2)
    asked = (await deliver(restarted, 11))[0]
    assert isinstance(asked, QuestionItem) and asked.question.id == failed[0]  # most overdue
    async with sessions() as session:
        due = await due_questions(session, 11, clock())
    assert list(due)[:2] == failed


async def test_a_skip_is_a_failed_review_and_review_runs_the_due_ones(
    sessions, bank: QuestionBank, scoring: ScoringService
) -> None:
    clock = Clock()
    service = make(sessions, bank, scoring, clock)
    await service.ensure_user(12, "ru")
    nothing = await service.start_review(12, 12)
    assert nothing == ReviewNotDue(None)
    await service.start(12, 12, "middle", 2)
    first = (await deliver(service, 12))[0]
    assert await service.skip(12, 12) is AnswerOutcome.skipped
    second = next(i for i in await deliver(service, 12) if isinstance(i, QuestionItem))
    await service.submit(12, 12, model_answer(bank, second.question.id))
    items = await deliver(service, 12)
    summary = next(i for i in items if isinstance(i, SummaryItem))
    assert summary.reviews_due_soon == 1  # the skipped one, due in a minute
    async with sessions() as session:
        card = await session.get(ReviewCard, (12, first.question.id))
        assert card is not None and card.lapses == 1
    # Nothing due yet: /review says when the next one is.
    waiting = await service.start_review(12, 12)
    assert isinstance(waiting, ReviewNotDue) and waiting.next_due == clock() + timedelta(minutes=1)
    clock.advance(minutes=2)
    started = await service.start_review(12, 12)
    assert isinstance(started, InterviewStart) and started.review and started.count == 1
    asked = (await deliver(service, 12))[0]
    assert isinstance(asked, QuestionItem) and asked.question.id == first.question.id


async def test_group_and_private_reviews_share_one_card(db_url: str) -> None:
    """Cards survive a new engine (a restart) and one row holds each (user, question)."""
    engine = create_engine(db_url)
    sessions = create_session_factory(engine)
    async with sessions() as session, session.begin():
        await record_review(session, 5, "q", 9.0, T0)
        await record_review(session, 5, "q", 9.0, T0 + timedelta(days=3))
    await engine.dispose()
    engine = create_engine(db_url)
    async with create_session_factory(engine)() as session:
        rows = (await session.scalars(select(ReviewCard))).all()
    await engine.dispose()
    assert [(r.user_id, r.question_id, r.reviews) for r in rows] == [(5, "q", 2)]
