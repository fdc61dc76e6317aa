"""The interview service without Telegram: choice, races, skips, restarts, recovery."""

from __future__ import annotations

import asyncio
import random

import pytest
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.services.commands import UsageError, parse_interview_args
from bot.services.interviews import InterviewService, Outcome
from bot.services.outbox import FeedbackItem, QuestionItem, SummaryItem
from bot.storage.models import AskedQuestion


def make(sessions, bank: QuestionBank, scoring: ScoringService) -> InterviewService:
    return InterviewService(sessions, bank, scoring, random.Random(7))


async def deliver(service: InterviewService, user_id: int) -> list:
    items = await service.outbox(user_id)
    for index, item in enumerate(items):
        await service.mark_sent(item, 10_000 + index if isinstance(item, QuestionItem) else None)
    return items


def test_parse_interview_args() -> None:
    assert parse_interview_args(None) == (None, None)
    assert parse_interview_args("middle 3") == ("middle", 3)
    assert parse_interview_args("4 senior") == ("senior", 4)
    for bad in ("expert", "999", "junior junior", "0", "3 4"):
        with pytest.raises(UsageError):
            parse_interview_args(bad)


async def test_unseen_questions_come_first(sessions, bank: QuestionBank, scoring) -> None:
    service = make(sessions, bank, scoring)
    await service.ensure_user(1, "en")
    seen: set[str] = set()
    juniors = {q.id for q in bank.by_level("junior")}
    while seen != juniors:
        await service.start(1, 1, "junior", 1)
        item = (await deliver(service, 1))[0]
        assert isinstance(item, QuestionItem) and item.question.id not in seen
        seen.add(item.question.id)
        outcome, _ = await service.submit(1, 1, "I don't know")
        assert outcome is Outcome.graded
        await deliver(service, 1)


async def test_racing_answers_grade_once(sessions, bank: QuestionBank, scoring) -> None:
    service = make(sessions, bank, scoring)
    await service.ensure_user(2, "en")
    await service.start(2, 2, "junior", 2)
    await deliver(service, 2)
    results = await asyncio.gather(
        service.submit(2, 2, "backward adds gradients into .grad every time", 1),
        service.submit(2, 2, "zero_grad clears the accumulated gradients", 2),
    )
    outcomes = sorted(o for o, _ in results)
    assert outcomes == sorted([Outcome.graded, Outcome.busy])
    # The same Telegram message delivered again after a restart is ignored (whichever won).
    winner = 1 + [o for o, _ in results].index(Outcome.graded)
    assert (await service.submit(2, 2, "backward adds gradients into .grad", winner))[
        0
    ] is Outcome.duplicate


async def test_skip_stop_and_summary(sessions, bank: QuestionBank, scoring) -> None:
    service = make(sessions, bank, scoring)
    await service.ensure_user(3, "ru")
    started = await service.start(3, 3, "middle", 3)
    assert started is not None and started.count == 3
    first = (await deliver(service, 3))[0]
    assert (await service.skip(3, 3, first.ask_id)) is Outcome.skipped
    assert (await service.skip(3, 3, first.ask_id)) is Outcome.already_answered
    second = (await deliver(service, 3))[0]
    assert isinstance(second, QuestionItem) and second.position == 2
    await service.submit(3, 3, second.question.answer.ru)
    feedback, third = await deliver(service, 3)
    assert isinstance(feedback, FeedbackItem) and feedback.score >= 7
    assert isinstance(third, QuestionItem)
    assert await service.stop(3)
    (summary,) = await deliver(service, 3)
    assert isinstance(summary, SummaryItem)
    assert (summary.answered, summary.skipped, summary.total) == (1, 1, 3)
    assert summary.average == feedback.score
    assert await service.outbox(3) == []
    assert (await service.submit(3, 3, "a late answer to nothing")) == (Outcome.no_question, None)


async def test_restart_recovers_an_answer_stored_but_not_graded(
    sessions, bank: QuestionBank, scoring
) -> None:
    service = make(sessions, bank, scoring)
    await service.ensure_user(4, "en")
    await service.start(4, 4, "junior", 2)
    await deliver(service, 4)
    # Simulate a crash between storing the answer and grading it.
    original = service.grade_pending

    async def crash(answer_id: int) -> None:
        raise RuntimeError("killed")

    service.grade_pending = crash  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await service.submit(4, 4, "backward accumulates gradients, zero_grad clears .grad")
    service.grade_pending = original  # type: ignore[method-assign]
    async with sessions() as session:
        statuses = (
            await session.scalars(select(AskedQuestion.status).where(AskedQuestion.user_id == 4))
        ).all()
    assert "grading" in statuses

    fresh = make(sessions, bank, scoring)  # a new process on the same database
    assert await fresh.recover() == [4]
    items = await deliver(fresh, 4)
    assert [type(i) for i in items] == [FeedbackItem, QuestionItem]
