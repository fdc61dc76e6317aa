"""/forget confirmed while that user's daily question is on its way: the batch's other outcomes
are still recorded (the forgotten user's ask would break the foreign key to users)."""

from __future__ import annotations

from datetime import UTC, datetime, time

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.services.daily import DeliveryOutcome
from bot.services.forget import forget_user
from bot.services.interviews import InterviewService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import AskedQuestion, DailySubscription
from tests.unit.test_daily_service import Clock, make, rows

Sessions = async_sessionmaker[AsyncSession]
START = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


async def test_forget_between_sending_and_recording_keeps_the_others(
    shared_db: str, bank: QuestionBank
) -> None:
    # SQLite and PostgreSQL: both enforce the foreign key (SQLite by the engine's pragma).
    engine = create_engine(shared_db)
    try:
        await _forget_between_sending_and_recording(create_session_factory(engine), bank)
    finally:
        await engine.dispose()


async def _forget_between_sending_and_recording(sessions: Sessions, bank: QuestionBank) -> None:
    clock = Clock(START)
    service = make(sessions, bank, clock)
    interviews = InterviewService(sessions, bank, None)  # type: ignore[arg-type]
    for uid in (1, 2, 3, 4):
        await interviews.ensure_user(uid, "en")
        await service.subscribe(uid, uid, time(12, 30), "UTC")
    clock.advance(minutes=30)
    await service.materialize()
    jobs = await service.claim(10)
    assert sorted(j.user_id for j in jobs) == [1, 2, 3, 4]
    assert all(await service.start_sending_many(jobs))
    by_user = {j.user_id: j for j in jobs}
    # The messages went out; users 2 and 4 confirm /forget before the outcomes are recorded.
    await forget_user(sessions, 2)
    await forget_user(sessions, 4)
    await service.record(
        [
            DeliveryOutcome(by_user[1], message_id=501),
            DeliveryOutcome(by_user[2], message_id=502),
            DeliveryOutcome(by_user[3], message_id=503),
            DeliveryOutcome(by_user[4], reason="blocked: Forbidden", deactivate=True),
        ]
    )
    state = {
        r.user_id: (r.status, r.message_id, r.ask_id is not None) for r in await rows(sessions)
    }
    assert state == {1: ("sent", 501, True), 3: ("sent", 503, True)}
    async with sessions() as session:
        asks = {
            (a.user_id, a.message_id, a.question_id)
            for a in await session.scalars(select(AskedQuestion))
        }
        subs = {s.user_id for s in await session.scalars(select(DailySubscription))}
    assert asks == {(1, 501, by_user[1].question.id), (3, 503, by_user[3].question.id)}
    assert subs == {1, 3}  # nothing of the forgotten came back
    # Nothing is left to settle as "interrupted" later.
    clock.advance(hours=1)
    assert await service.expire() == 0
