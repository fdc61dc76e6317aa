"""A daily question's ask exists from the moment its send begins, so a kill between Telegram
taking the message and record() loses nothing: a reply to it (or a plain answer) grades that
question, not an older open one. And the private outbox never sends such an ask a second time.
Also: a bot down for over a month still sends the latest due question within the grace."""

from __future__ import annotations

import random
from datetime import UTC, datetime, time, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.services.daily import REASON_ARRIVED, REASON_INTERRUPTED, REASON_MISSED, DeliveryOutcome
from bot.services.interviews import AnswerOutcome as Answered
from bot.services.interviews import InterviewService
from bot.services.outbox import FeedbackItem, QuestionItem
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import Answer, AskedQuestion
from tests.unit.test_daily_service import Clock, deliver, make, rows

Sessions = async_sessionmaker[AsyncSession]
START = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)  # a Wednesday


async def _asks(sessions: Sessions) -> list[AskedQuestion]:
    async with sessions() as session:
        return list((await session.scalars(select(AskedQuestion).order_by(AskedQuestion.id))).all())


async def _answers(sessions: Sessions) -> list[Answer]:
    async with sessions() as session:
        return list((await session.scalars(select(Answer).order_by(Answer.id))).all())


async def test_reply_after_a_kill_between_send_and_record_grades_that_question(
    shared_db: str, bank: QuestionBank, scoring: ScoringService
) -> None:
    engine = create_engine(shared_db)
    try:
        sessions = create_session_factory(engine)
        clock = Clock(START)
        service = make(sessions, bank, clock)
        interviews = InterviewService(sessions, bank, scoring, random.Random(2))
        await interviews.ensure_user(1, "en")
        await service.subscribe(1, 1, time(12, 30), "UTC")
        clock.advance(minutes=30)
        day1 = (await deliver(service, 100))[0]  # left unanswered: still open
        clock.advance(days=1)
        await service.materialize()
        (day2,) = await service.claim(10)
        assert day2.question.id != day1.question.id
        assert await service.start_sending(day2)
        # Telegram took the message (id 200); the process was killed before record().
        # After the restart the user starts an interview; its first question is message 300.
        service = make(sessions, bank, clock)
        interviews = InterviewService(sessions, bank, scoring, random.Random(2))
        assert await interviews.recover() == []  # the daily ask is owed to no outbox
        await interviews.start(1, 1, "middle", 2)
        (item,) = await interviews.outbox(1)
        assert isinstance(item, QuestionItem) and item.question.id != day2.question.id
        await interviews.mark_sent(item, 300)
        # The reply to the day-2 message grades the day-2 question, not the interview's
        # (newer) or day 1's (older): its id lies between theirs.
        outcome, answer_id = await interviews.submit(
            1, 1, day2.question.answer.en, 301, reply_to=200
        )
        assert outcome is Answered.graded and answer_id is not None
        assert [(a.id, a.question_id) for a in await _answers(sessions)] == [
            (answer_id, day2.question.id)
        ]
        feedback = [i for i in await interviews.outbox(1) if isinstance(i, FeedbackItem)]
        assert [f.question.id for f in feedback] == [day2.question.id]
        open_ids = {a.question_id for a in await _asks(sessions) if a.status == "open"}
        assert open_ids == {day1.question.id, item.question.id}  # nothing else taken
        # 15 minutes on, the answer proves the message arrived: sent, not "interrupted".
        clock.advance(minutes=20)
        assert await service.expire() == 1
        state = [(r.local_date, r.status, r.reason) for r in await rows(sessions)]
        assert state[-1] == ("2026-06-11", "sent", REASON_ARRIVED)
    finally:
        await engine.dispose()


async def test_plain_answer_after_an_interrupted_send_grades_that_question(
    sessions: Sessions, bank: QuestionBank, scoring: ScoringService
) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, scoring, random.Random(2))
    await interviews.ensure_user(1, "en")
    await service.subscribe(1, 1, time(12, 30), "UTC")
    clock.advance(minutes=30)
    await deliver(service, 100)  # day 1, left unanswered
    clock.advance(days=1)
    await service.materialize()
    (day2,) = await service.claim(10)
    assert await service.start_sending(day2)  # killed after the send, before record()
    clock.advance(minutes=20)
    assert await service.expire() == 1
    assert [r.reason for r in await rows(sessions)][-1] == REASON_INTERRUPTED
    # The outcome is unknown, so the question stays answerable, like an interview question
    # sent again after a kill: a plain answer goes to it, the most recently asked.
    outcome, _ = await interviews.submit(1, 1, "I don't know", 250)
    assert outcome is Answered.graded
    assert [a.question_id for a in await _answers(sessions)] == [day2.question.id]


async def test_broadcast_makes_one_ask_per_delivery_and_the_outbox_sends_none(
    shared_db: str, bank: QuestionBank
) -> None:
    engine = create_engine(shared_db)
    try:
        sessions = create_session_factory(engine)
        clock = Clock(START)
        service = make(sessions, bank, clock)
        interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
        users = (1, 2, 3, 4)
        for uid in users:
            await interviews.ensure_user(uid, "en")
            await service.subscribe(uid, uid, time(12, 30), "UTC")
        clock.advance(minutes=30)
        await service.materialize()
        jobs = await service.claim(10)
        assert all(await service.start_sending_many(jobs))
        # In flight: each delivery has its ask, with no message id yet, and none of them is
        # an unsent question of the private outbox (it would go out a second time).
        by_delivery = {r.id: r.ask_id for r in await rows(sessions)}
        asks = {a.id: a for a in await _asks(sessions)}
        assert None not in by_delivery.values()
        assert sorted(by_delivery.values()) == sorted(asks)  # type: ignore[type-var]
        assert all(a.message_id is None and a.send_attempts == 1 for a in asks.values())
        assert await interviews.recover() == []
        for uid in users:
            assert await interviews.outbox(uid) == []
        by_user = {j.user_id: j for j in jobs}
        await service.record(
            [DeliveryOutcome(by_user[uid], message_id=500 + uid) for uid in (1, 2, 3)]
            + [DeliveryOutcome(by_user[4], reason="error: TelegramNetworkError")]
        )
        asks = {a.id: a for a in await _asks(sessions)}
        state = {r.user_id: (r.status, r.message_id, asks[r.ask_id].message_id if r.ask_id
                             else None) for r in await rows(sessions)}  # fmt: skip
        assert state == {
            1: ("sent", 501, 501),
            2: ("sent", 502, 502),
            3: ("sent", 503, 503),
            4: ("failed", None, None),
        }
        # The failed send's ask is gone: it can be neither answered nor owed.
        assert sorted(a.user_id for a in asks.values()) == [1, 2, 3]
        for uid in users:
            assert await interviews.outbox(uid) == []
        clock.advance(hours=1)
        assert await service.expire() == 0
    finally:
        await engine.dispose()


async def test_down_for_over_a_month_still_sends_the_latest_within_grace(
    sessions: Sessions, bank: QuestionBank
) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock, grace=timedelta(hours=3))
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(12, 30), "UTC")  # first due 2026-06-10 12:30
    clock.advance(days=40, hours=1)  # back at 2026-07-20 13:00: today's is 30 minutes late
    await service.materialize()
    state = [(r.local_date, r.status, r.reason) for r in await rows(sessions)]
    assert len(state) == 31  # the last month's misses, not the first
    assert state[-1] == ("2026-07-20", "pending", None)
    assert state[0] == ("2026-06-20", "failed", REASON_MISSED)
    assert all(s[1:] == ("failed", REASON_MISSED) for s in state[:-1])
    assert [j.local_date for j in await service.claim(10)] == ["2026-07-20"]
    view = await service.view(1)
    assert view is not None and view.next_due_at == datetime(2026, 7, 21, 12, 30, tzinfo=UTC)


async def test_a_plain_answer_while_a_daily_send_is_in_flight_goes_to_the_shown_question(
    sessions: Sessions, bank: QuestionBank, scoring: ScoringService
) -> None:
    """The daily question's ask exists from the start of its send, but until its message can
    have arrived, a plain answer belongs to the interview question the person is looking at."""
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, scoring, random.Random(2), clock=clock)
    await interviews.ensure_user(1, "en")
    await service.subscribe(1, 1, time(12, 30), "UTC")
    await interviews.start(1, 1, "junior", 2)
    (item,) = await interviews.outbox(1)
    await interviews.mark_sent(item, 100)
    clock.advance(minutes=30)
    await service.materialize()
    (daily,) = await service.claim(10)
    assert await service.start_sending(daily)  # in flight now
    outcome, _ = await interviews.submit(1, 1, item.question.answer.en, 101)
    assert outcome is Answered.graded
    assert [a.question_id for a in await _answers(sessions)] == [item.question.id]
