"""The daily service without Telegram: subscriptions, due rows, claims, grace, choice, streaks."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, time, timedelta

from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.services.daily import (
    REASON_INTERRUPTED,
    REASON_MISSED,
    DailyJob,
    DailyService,
)
from bot.services.interviews import AnswerOutcome, InterviewService
from bot.storage.models import AskedQuestion, DailyDelivery


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


START = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)  # a Wednesday


def make(sessions, bank: QuestionBank, clock: Clock, **kw) -> DailyService:
    return DailyService(sessions, bank, clock=clock, rng=random.Random(3), **kw)


async def rows(sessions) -> list[DailyDelivery]:
    async with sessions() as session:
        return list((await session.scalars(select(DailyDelivery).order_by(DailyDelivery.id))).all())


async def deliver(service: DailyService, message_id: int = 5000) -> list[DailyJob]:
    await service.expire()
    await service.materialize()
    jobs = await service.claim(100)
    for offset, job in enumerate(jobs):
        assert await service.start_sending(job)
        await service.mark_sent(job, message_id + offset)
    return jobs


async def test_subscribe_remembers_timezone_and_unsubscribes(sessions, bank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    view = await service.subscribe(1, 1, time(9, 0), None)
    assert (view.timezone, view.timezone_given, view.active) == ("UTC", False, True)
    assert view.next_due_at == datetime(2026, 6, 11, 9, 0, tzinfo=UTC)
    view = await service.subscribe(1, 1, time(16, 0), "Europe/Moscow")
    assert view.next_due_at == datetime(2026, 6, 10, 13, 0, tzinfo=UTC)
    assert await service.unsubscribe(1)
    assert not await service.unsubscribe(1)
    assert (await service.view(1)).active is False  # type: ignore[union-attr]
    view = await service.subscribe(1, 1, time(8, 0), None)  # the timezone was remembered
    assert view.timezone == "Europe/Moscow" and view.timezone_given
    assert view.next_due_at == datetime(2026, 6, 11, 5, 0, tzinfo=UTC)


async def test_one_delivery_per_local_day_claimed_once(sessions, bank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
    for uid, tz in ((1, "Europe/Moscow"), (2, "America/New_York"), (3, "+3")):
        await interviews.ensure_user(uid, "en")
        await service.subscribe(uid, uid, time(16, 0), tz)
    clock.advance(hours=1)  # 13:00 UTC = 16:00 in Moscow and at UTC+3; 09:00 in New York
    assert await service.materialize() == 2
    assert await service.materialize() == 0
    first, second = await asyncio.gather(service.claim(10), service.claim(10))
    jobs = first + second
    assert sorted(j.user_id for j in jobs) == [1, 3]
    assert await service.claim(10) == []
    clock.advance(hours=7)  # 20:00 UTC = 16:00 in New York
    await service.materialize()
    assert [j.user_id for j in await service.claim(10)] == [2]
    # The same local day again (the user moves the time later): no second row.
    for job in jobs:
        await service.mark_sent(job, 7000 + job.user_id)
    await service.subscribe(1, 1, time(23, 30), "Europe/Moscow")
    clock.advance(hours=1)
    assert await service.materialize() == 0
    dates = [(r.user_id, r.local_date) for r in await rows(sessions)]
    assert len(dates) == len(set(dates)) == 3


async def test_grace_window_after_downtime(sessions, bank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock, grace=timedelta(hours=3))
    interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
    await interviews.ensure_user(1, "en")
    await interviews.ensure_user(2, "en")
    await service.subscribe(1, 1, time(10, 0), "UTC")  # tomorrow 10:00
    await service.subscribe(2, 2, time(13, 0), "UTC")  # today 13:00
    clock.advance(days=1, hours=0.5)  # the bot was down: 12:30 next day
    await service.materialize()
    by_user = {r.user_id: r for r in await rows(sessions)}
    assert by_user[1].status == "pending"  # 2.5 h late: still sent
    assert by_user[2].status == "failed" and by_user[2].reason == REASON_MISSED  # 23.5 h late
    assert [j.user_id for j in await service.claim(10)] == [1]
    # A pending row whose process never came back within the window is settled as missed.
    clock.advance(hours=1)  # 13:30: user 2's second day is due
    await service.materialize()
    clock.advance(hours=4)
    assert await service.expire() == 1
    assert await service.claim(10) == []
    statuses = sorted((r.user_id, r.status, r.reason) for r in await rows(sessions))
    assert statuses[-1] == (2, "failed", REASON_MISSED)


async def test_dead_process_rows_are_settled(sessions, bank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
    for uid in (1, 2):
        await interviews.ensure_user(uid, "en")
        await service.subscribe(uid, uid, time(12, 30), "UTC")
    clock.advance(minutes=30)
    await service.materialize()
    jobs = await service.claim(10)
    assert len(jobs) == 2
    assert await service.start_sending(jobs[0])  # the process dies mid-request for user 1
    clock.advance(minutes=5)  # and before trying user 2
    await service.expire()
    again = await service.claim(10)
    assert [j.user_id for j in again] == [jobs[1].user_id]  # never tried: safe to resend
    assert not await service.start_sending(jobs[1])  # the dead claim lost it
    clock.advance(minutes=20)
    await service.expire()
    state = {r.user_id: (r.status, r.reason) for r in await rows(sessions)}
    assert state[jobs[0].user_id] == ("failed", REASON_INTERRUPTED)


async def test_no_repeats_until_the_level_is_exhausted(sessions, bank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(12, 30), "UTC")
    juniors = {q.id for q in bank.by_level("junior")}
    asked: list[str] = []
    for day in range(len(juniors) + 2):
        clock.advance(days=1) if day else clock.advance(minutes=30)
        jobs = await deliver(service, 9000 + day)
        assert len(jobs) == 1 and jobs[0].level == "junior"
        asked.append(jobs[0].question.id)
    assert set(asked[: len(juniors)]) == juniors
    assert len(set(asked[: len(juniors)])) == len(juniors)
    assert asked[len(juniors)] != asked[len(juniors) + 1]


async def test_unseen_then_poorly_answered_first(sessions, bank, scoring) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, scoring, random.Random(1))
    await interviews.ensure_user(1, "en")
    await interviews.update_user(1, level="senior")
    seniors = bank.by_level("senior")
    # Everything but two questions was seen in interviews: one answered well, one badly.
    good, bad = seniors[0], seniors[1]
    async with sessions() as session, session.begin():
        for index, question in enumerate(seniors):
            session.add(
                AskedQuestion(user_id=1, chat_id=1, question_id=question.id, message_id=100 + index)
            )
    await interviews.submit(1, 1, good.answer.en, reply_to=100)
    await interviews.submit(1, 1, "I don't know", reply_to=101)
    await service.subscribe(1, 1, time(12, 30), "UTC")
    clock.advance(minutes=30)
    first = (await deliver(service))[0].question.id
    assert first not in (good.id, bad.id)  # seen but never answered: score 0, like "bad"
    # After every other senior question came as a daily one, the well-answered comes last.
    order = [first]
    for day in range(len(seniors) - 1):
        clock.advance(days=1)
        order.append((await deliver(service, 6000 + day))[0].question.id)
    assert order[-1] == good.id
    assert sorted(order) == sorted(q.id for q in seniors)


async def test_a_due_review_comes_before_unseen_questions(sessions, bank, scoring) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, scoring, random.Random(1), clock=clock)
    await interviews.ensure_user(1, "en")
    missed = bank.by_level("junior")[3]
    async with sessions() as session, session.begin():
        session.add(AskedQuestion(user_id=1, chat_id=1, question_id=missed.id, message_id=100))
    await interviews.submit(1, 1, "I don't know", reply_to=100)  # due again in a minute
    await service.subscribe(1, 1, time(12, 30), "UTC")
    clock.advance(minutes=30)
    assert [job.question.id for job in await deliver(service)] == [missed.id]


async def test_reply_to_old_daily_question_during_an_interview(sessions, bank, scoring) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, scoring, random.Random(2))
    await interviews.ensure_user(1, "en")
    await service.subscribe(1, 1, time(12, 30), "UTC")
    clock.advance(minutes=30)
    daily = (await deliver(service, 4242))[0]
    await interviews.start(1, 1, "middle", 2)
    for item in await interviews.outbox(1):
        await interviews.mark_sent(item, 4300)
    # A reply to the daily question grades it even though the interview's question is newer.
    outcome, _ = await interviews.submit(1, 1, daily.question.answer.en, 4301, reply_to=4242)
    assert outcome is AnswerOutcome.graded
    feedback = [i for i in await interviews.outbox(1) if hasattr(i, "score")]
    assert feedback[0].question.id == daily.question.id
    assert getattr(feedback[0], "streak", None) == 1
    async with sessions() as session:
        open_asks = (
            await session.scalars(select(AskedQuestion).where(AskedQuestion.status == "open"))
        ).all()
    assert [a.interview_id is not None for a in open_asks] == [True]
    # A plain message goes to the most recently asked open question: the interview's.
    outcome, _ = await interviews.submit(1, 1, "I don't know", 4302)
    assert outcome is AnswerOutcome.graded
    assert (await service.view(1)).streak == 1  # type: ignore[union-attr]


async def test_streak_counts_consecutive_answered_days(sessions, bank, scoring) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, scoring)
    await interviews.ensure_user(1, "en")
    await service.subscribe(1, 1, time(12, 30), "UTC")
    clock.advance(minutes=30)
    before, after = [], []
    for day in range(4):
        if day:
            clock.advance(days=1)
        job = (await deliver(service, 100 * (day + 1)))[0]
        assert job.local_date == (START + timedelta(days=day)).date().isoformat()
        before.append((await service.view(1)).streak)  # type: ignore[union-attr]
        if day != 2:  # the third day's question is left unanswered
            await interviews.submit(1, 1, "I don't know", 10 + day, reply_to=100 * (day + 1))
        after.append((await service.view(1)).streak)  # type: ignore[union-attr]
    assert before == [0, 1, 2, 0]
    assert after == [1, 2, 2, 1]


async def test_blocked_user_is_deactivated_at_once(sessions, bank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(12, 30), "UTC")
    clock.advance(minutes=30)
    await service.materialize()
    assert await service.deactivate(1)
    view = await service.view(1)
    assert view is not None and not view.active and view.next_due_at is None
    assert [(r.status, r.reason) for r in await rows(sessions)] == [
        ("failed", "blocked: the user blocked the bot")
    ]
    clock.advance(days=1)
    assert await service.materialize() == 0
