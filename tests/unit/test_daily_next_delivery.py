"""The next delivery /daily names is the one the scheduler makes: a local date that already has
its delivery row (today's question came) gets no second one, so the next is the next day."""

from __future__ import annotations

from datetime import UTC, datetime, time

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.services.daily import DailyService, DeliveryOutcome
from bot.services.interviews import InterviewService
from tests.unit.test_daily_service import Clock, deliver, make, rows

Sessions = async_sessionmaker[AsyncSession]
WEDNESDAY_8 = datetime(2026, 6, 10, 8, 0, tzinfo=UTC)


async def _delivered_at_nine(
    sessions: Sessions, bank: QuestionBank, tz: str = "UTC"
) -> tuple[DailyService, Clock]:
    """A subscriber (user 1) whose 09:00 question came today; the clock is then at 10:00 UTC."""
    clock = Clock(WEDNESDAY_8)
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(9, 0), tz)
    clock.advance(hours=1)
    assert len(await deliver(service)) == 1
    clock.advance(hours=1)
    return service, clock


async def _due_times(service: DailyService, sessions: Sessions) -> list[datetime]:
    await service.materialize()
    return [r.due_at.replace(tzinfo=UTC) for r in await rows(sessions)]


async def test_later_time_after_todays_question_names_tomorrow(
    sessions: Sessions, bank: QuestionBank
) -> None:
    service, clock = await _delivered_at_nine(sessions, bank)
    view = await service.subscribe(1, 1, time(18, 0), None)
    tomorrow_18 = datetime(2026, 6, 11, 18, 0, tzinfo=UTC)
    assert view.next_due_at == tomorrow_18
    assert (await service.view(1)).next_due_at == tomorrow_18  # type: ignore[union-attr]
    # The scheduler agrees: nothing at 18:00 today, the next row is the one named.
    clock.now = datetime(2026, 6, 10, 18, 30, tzinfo=UTC)
    assert len(await _due_times(service, sessions)) == 1
    clock.now = tomorrow_18
    assert (await _due_times(service, sessions))[1:] == [view.next_due_at]


async def test_local_date_counts_in_the_subscribers_timezone(
    sessions: Sessions, bank: QuestionBank
) -> None:
    # 09:00 in Moscow is 06:00 UTC: today's came before the test's first hour.
    clock = Clock(datetime(2026, 6, 10, 5, 0, tzinfo=UTC))
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(9, 0), "Europe/Moscow")
    clock.advance(hours=1)
    assert len(await deliver(service)) == 1
    clock.advance(hours=2)  # 11:00 in Moscow
    view = await service.subscribe(1, 1, time(23, 30), None)
    assert view.next_due_at == datetime(2026, 6, 11, 20, 30, tzinfo=UTC)  # tomorrow 23:30 MSK


async def test_weekdays_toggle_after_todays_question_keeps_tomorrow(
    sessions: Sessions, bank: QuestionBank
) -> None:
    service, clock = await _delivered_at_nine(sessions, bank)
    await service.subscribe(1, 1, time(18, 0), None)
    view = await service.update(1, weekdays_only=True)  # a Wednesday: today is a weekday
    assert view is not None and view.next_due_at == datetime(2026, 6, 11, 18, 0, tzinfo=UTC)
    view = await service.update(1, weekdays_only=False)
    assert view is not None and view.next_due_at == datetime(2026, 6, 11, 18, 0, tzinfo=UTC)
    clock.now = datetime(2026, 6, 10, 18, 30, tzinfo=UTC)
    assert len(await _due_times(service, sessions)) == 1


async def test_a_failed_delivery_today_also_moves_the_next_to_tomorrow(
    sessions: Sessions, bank: QuestionBank
) -> None:
    # Blocked at today's question, unblocked an hour later: today's row (failed) stays the one
    # for today, so resubscribing for the evening cannot bring a second one.
    clock = Clock(WEDNESDAY_8)
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(9, 0), None)
    clock.advance(hours=1)
    await service.materialize()
    [job] = await service.claim(10)
    assert await service.start_sending(job)
    await service.record([DeliveryOutcome(job, reason="blocked: Forbidden", deactivate=True)])
    clock.advance(hours=1)
    view = await service.subscribe(1, 1, time(18, 0), None)
    assert view.next_due_at == datetime(2026, 6, 11, 18, 0, tzinfo=UTC)


async def test_no_row_today_still_names_today(sessions: Sessions, bank: QuestionBank) -> None:
    clock = Clock(WEDNESDAY_8)
    service = make(sessions, bank, clock)
    await InterviewService(sessions, bank, None).ensure_user(1, "en")  # type: ignore[arg-type]
    await service.subscribe(1, 1, time(7, 0), None)  # tomorrow 07:00; nothing today
    view = await service.subscribe(1, 1, time(18, 0), None)
    assert view.next_due_at == datetime(2026, 6, 10, 18, 0, tzinfo=UTC)
