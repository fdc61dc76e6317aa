"""The interview service without Telegram: choice, races, skips, restarts, recovery."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.scoring.grade_result import GradeResult
from bot.scoring.service import ScoringService
from bot.services.commands import UsageError, parse_interview_args
from bot.services.interviews import AnswerOutcome, InterviewService
from bot.services.outbox import FeedbackItem, QuestionItem, SummaryItem
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import Answer, AskedQuestion, Interview
from bot.storage.repository import Repo


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
        assert outcome is AnswerOutcome.graded
        await deliver(service, 1)


async def test_racing_answers_grade_once(sessions, bank: QuestionBank, scoring) -> None:
    service = make(sessions, bank, scoring)
    await service.ensure_user(2, "en")
    await service.start(2, 2, "junior", 2)
    await deliver(service, 2)
    results = await asyncio.gather(
        service.submit(2, 2, "backward adds gradients into .grad every time", 20_001),
        service.submit(2, 2, "zero_grad clears the accumulated gradients", 20_002),
    )
    outcomes = sorted(o for o, _ in results)
    assert outcomes == sorted([AnswerOutcome.graded, AnswerOutcome.busy])
    # The same Telegram message delivered again after a restart is ignored (whichever won).
    winner = 20_001 + [o for o, _ in results].index(AnswerOutcome.graded)
    assert (await service.submit(2, 2, "backward adds gradients into .grad", winner))[
        0
    ] is AnswerOutcome.duplicate


async def test_skip_stop_and_summary(sessions, bank: QuestionBank, scoring) -> None:
    service = make(sessions, bank, scoring)
    await service.ensure_user(3, "ru")
    started = await service.start(3, 3, "middle", 3)
    assert started is not None and started.count == 3
    first = (await deliver(service, 3))[0]
    assert (await service.skip(3, 3, first.ask_id)) is AnswerOutcome.skipped
    assert (await service.skip(3, 3, first.ask_id)) is AnswerOutcome.already_answered
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
    assert (await service.submit(3, 3, "a late answer to nothing")) == (
        AnswerOutcome.no_question,
        None,
    )


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
    outcome, answer_id = await service.submit(
        4, 4, "backward accumulates gradients, zero_grad clears .grad"
    )
    assert outcome is AnswerOutcome.grade_later and answer_id is not None  # stored, not graded
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


async def test_an_answer_taken_over_from_a_killed_replica_is_graded_at_once(
    sessions, bank: QuestionBank, scoring
) -> None:
    """A replica stored the answer and was killed while grading it; a survivor takes over the
    update (the same message) and grades the stored answer now, once, rather than calling it a
    duplicate and leaving it to the periodic retry or the next restart."""
    killed = make(sessions, bank, scoring)
    await killed.ensure_user(5, "en")
    await killed.start(5, 5, "junior", 2)
    await deliver(killed, 5)

    async def kill(answer_id: int) -> None:
        raise asyncio.CancelledError  # the process died mid-grade

    killed.grade_pending = kill  # type: ignore[method-assign]
    text = "backward accumulates gradients, zero_grad clears .grad"
    with pytest.raises(asyncio.CancelledError):
        await killed.submit(5, 5, text, 40_001)

    survivor = make(sessions, bank, scoring)
    outcome, answer_id = await survivor.submit(5, 5, text, 40_001)
    assert outcome is AnswerOutcome.graded and answer_id is not None
    items = await deliver(survivor, 5)
    assert [type(i) for i in items] == [FeedbackItem, QuestionItem]
    assert (await survivor.submit(5, 5, text, 40_001))[0] is AnswerOutcome.duplicate
    async with sessions() as session:
        assert len((await session.scalars(select(Answer).where(Answer.user_id == 5))).all()) == 1


class GatedScoring:
    """Grades only once `open` is set: lets two graders of one answer run side by side."""

    def __init__(self, real: ScoringService) -> None:
        self.real = real
        self.open = asyncio.Event()
        self.waiting = 0

    def prepare(self, question_ids: list[str]) -> None:
        pass

    async def grade(
        self, question: Question, text: str, language: str | None = None
    ) -> GradeResult:
        self.waiting += 1
        await self.open.wait()
        return await self.real.grade(question, text, language)


@pytest.mark.parametrize("shared_db", ["postgresql"], indirect=True)
async def test_two_replicas_grading_one_answer_store_one_grade(
    shared_db: str, bank: QuestionBank, scoring
) -> None:
    """A survivor grading a taken-over answer while the restarted replica's recovery grades
    it too: one grade is stored and neither fails (unlocked, the loser read the answer as
    pending, then its question as answered, and raised)."""
    engine = create_engine(shared_db)
    sessions = create_session_factory(engine)
    try:
        gated = GatedScoring(scoring)
        service = InterviewService(sessions, bank, gated, random.Random(7))  # type: ignore[arg-type]
        await service.ensure_user(9, "en")
        await service.start(9, 9, "junior", 2)
        await deliver(service, 9)
        gated.open.set()

        async def kill(answer_id: int) -> None:
            raise asyncio.CancelledError

        original, service.grade_pending = service.grade_pending, kill  # type: ignore[method-assign]
        with pytest.raises(asyncio.CancelledError):
            await service.submit(9, 9, "backward accumulates gradients into .grad", 50_001)
        service.grade_pending = original  # type: ignore[method-assign]
        gated.open.clear()
        async with sessions() as session:
            answer_id = (await session.scalars(select(Answer.id).where(Answer.user_id == 9))).one()
        other = InterviewService(sessions, bank, gated, random.Random(7))  # type: ignore[arg-type]
        both = asyncio.gather(service.grade_pending(answer_id), other.grade_pending(answer_id))
        while gated.waiting < 2:
            await asyncio.sleep(0.01)
        gated.open.set()
        await both
        items = await deliver(service, 9)
        assert [type(i) for i in items] == [FeedbackItem, QuestionItem]
    finally:
        await engine.dispose()


async def test_a_burst_is_never_graded_against_an_unsent_question(
    sessions, bank: QuestionBank, scoring
) -> None:
    """Two messages sent before the next question arrives: the second is not graded against
    that question (the person never saw it), and the question is still sent afterwards."""
    service = make(sessions, bank, scoring)
    await service.ensure_user(5, "en")
    await service.start(5, 5, "junior", 2)
    (first,) = await deliver(service, 5)  # question 1 is message 10_000
    assert (await service.submit(5, 5, "backward accumulates gradients into .grad", 10_001))[
        0
    ] is AnswerOutcome.graded
    # Question 2 exists now but is not sent yet; the second message of the burst comes in.
    second_of_burst = await service.submit(5, 5, "and zero_grad resets them every step", 10_002)
    assert second_of_burst == (AnswerOutcome.not_yet_asked, None)
    feedback, question = await deliver(service, 5)  # question 2 is message 10_001 in `deliver`
    assert isinstance(feedback, FeedbackItem) and feedback.question.id == first.question.id
    assert isinstance(question, QuestionItem) and question.position == 2
    # A message older than question 2's message is not an answer to it either.
    assert (await service.submit(5, 5, "one more thought on the first question", 10_000))[
        0
    ] is AnswerOutcome.not_yet_asked
    outcome, _ = await service.submit(5, 5, question.question.answer.en, 10_050)
    assert outcome is AnswerOutcome.graded
    feedback2, summary = await deliver(service, 5)
    assert isinstance(feedback2, FeedbackItem) and feedback2.question.id == question.question.id
    assert isinstance(summary, SummaryItem) and summary.answered == 2


async def test_commands_handled_twice_act_once(sessions, bank: QuestionBank, scoring) -> None:
    """After a restart an update may be handled again: /interview and /skip must not act twice."""
    service = make(sessions, bank, scoring)
    await service.ensure_user(6, "en")
    started = await service.start(6, 6, "middle", 3, message_id=500)
    again = await service.start(6, 6, "middle", 3, message_id=500)
    assert started is not None and again is not None
    assert again.replayed and again.interview_id == started.interview_id and not again.replaced
    await deliver(service, 6)  # message 10_000
    assert await service.skip(6, 6, message_id=10_001) is AnswerOutcome.skipped
    (second,) = await deliver(service, 6)  # message 10_000 + 0 again in `deliver`: renumber
    async with sessions() as session, session.begin():
        ask = await session.get(AskedQuestion, second.ask_id)
        assert ask is not None
        ask.message_id = 10_002  # sent after the /skip message
    assert await service.skip(6, 6, message_id=10_001) is AnswerOutcome.no_question
    assert await service.skip(6, 6, message_id=10_003) is AnswerOutcome.skipped


async def test_a_question_sent_again_after_a_kill_takes_an_answer_to_its_first_copy(
    sessions, bank: QuestionBank, scoring
) -> None:
    """Killed between Telegram taking the question and the bot recording its id, the bot sends
    it again after the restart; the answer the person wrote to the first copy still counts."""
    service = make(sessions, bank, scoring)
    await service.ensure_user(7, "en")
    await service.start(7, 7, "junior", 1)
    (question,) = await service.outbox(7)
    assert isinstance(question, QuestionItem)
    await service.begin_send(question)  # the first copy went out; then the process died
    await service.begin_send(question)  # the restarted process sends it again
    await service.mark_sent(question, 20_000)
    outcome, _ = await service.submit(7, 7, question.question.answer.en, 19_990)
    assert outcome is AnswerOutcome.graded


class FailingScoring:
    """A scoring service whose grading fails for answers containing `poison` (a model process
    that died, an embedding server that is down)."""

    def __init__(self, real: ScoringService, poison: str) -> None:
        self.real = real
        self.poison = poison

    def prepare(self, question_ids: list[str]) -> None:
        self.real.prepare(question_ids)

    async def grade(
        self, question: Question, text: str, language: str | None = None
    ) -> GradeResult:
        if self.poison in text:
            raise ConnectionError("embedding server unreachable")
        return await self.real.grade(question, text, language)


async def test_an_answer_whose_grading_failed_is_kept_and_graded_later(
    sessions, bank: QuestionBank, scoring
) -> None:
    flaky = FailingScoring(scoring, "zero_grad")
    service = InterviewService(sessions, bank, flaky, random.Random(7))  # type: ignore[arg-type]
    await service.ensure_user(6, "en")
    await service.start(6, 6, "junior", 2)
    await deliver(service, 6)
    text = "backward accumulates gradients, zero_grad clears .grad"
    outcome, answer_id = await service.submit(6, 6, text, 30_001)
    assert outcome is AnswerOutcome.grade_later
    assert await service.outbox(6) == []  # nothing to send yet
    # A second message while it waits: the question is taken, not graded twice.
    assert (await service.submit(6, 6, "another try", 30_002))[0] is AnswerOutcome.busy
    # Too fresh for the periodic retry (it may still be grading in its handler).
    assert await service.grade_stored(older_than=timedelta(minutes=1)) == []
    assert await service.grade_stored() == []  # the server is still down: left for later
    flaky.poison = "nothing matches this"
    assert await service.grade_stored() == [6]
    feedback, question = await deliver(service, 6)
    assert isinstance(feedback, FeedbackItem) and isinstance(question, QuestionItem)
    async with sessions() as session:
        answer = await session.get(Answer, answer_id)
        assert answer is not None and answer.text == text and answer.status == "delivered"


async def test_one_answer_that_cannot_be_graded_does_not_stop_recovery(
    sessions, bank: QuestionBank, scoring
) -> None:
    flaky = FailingScoring(scoring, "poison")
    service = InterviewService(sessions, bank, flaky, random.Random(7))  # type: ignore[arg-type]
    for user in (7, 8):
        await service.ensure_user(user, "en")
        await service.start(user, user, "junior", 2)
        await deliver(service, user)
    assert (await service.submit(7, 7, "poison: this one always fails"))[
        0
    ] is AnswerOutcome.grade_later
    # Stored with grading never reached (a kill): recovered at the next start.
    original = service.grade_pending

    async def killed(answer_id: int) -> None:
        raise asyncio.CancelledError

    service.grade_pending = killed  # type: ignore[method-assign]
    with pytest.raises(asyncio.CancelledError):
        await service.submit(8, 8, "backward accumulates gradients into .grad")
    service.grade_pending = original  # type: ignore[method-assign]

    owed = await service.recover()  # must not raise on user 7's answer
    assert 8 in owed
    assert [type(i) for i in await deliver(service, 8)] == [FeedbackItem, QuestionItem]


async def test_a_level_without_questions_keeps_the_running_interview(
    sessions, bank: QuestionBank, scoring
) -> None:
    # A CONTENT_DIR without senior questions.
    juniors = replace(bank, questions={q.id: q for q in bank if q.level != "senior"})
    service = make(sessions, juniors, scoring)
    await service.ensure_user(9, "en")
    running = await service.start(9, 9, "junior", 3)
    assert running is not None
    await deliver(service, 9)
    assert await service.start(9, 9, "senior", 3) is None
    # The interview goes on: an answer is graded against its question.
    assert (await service.submit(9, 9, "backward accumulates gradients"))[0] is AnswerOutcome.graded


async def test_questions_that_left_the_bank_do_not_stall_an_interview(
    sessions, bank: QuestionBank, scoring
) -> None:
    """A content update between two runs removed questions of a running interview: the next
    unsent ones are passed over, the interview still ends with its summary, and feedback that
    cannot be shown any more is not owed forever."""
    service = make(sessions, bank, scoring)
    await service.ensure_user(10, "en")
    await service.start(10, 10, "junior", 3)
    (first,) = await deliver(service, 10)
    assert isinstance(first, QuestionItem)
    await service.submit(10, 10, "backward accumulates gradients into .grad", 40_001)
    async with sessions() as session:
        interview_questions = (
            await session.scalars(select(AskedQuestion).where(AskedQuestion.user_id == 10))
        ).all()
    # The new bank has neither the answered question nor the two still to come.
    (interview,) = {a.interview_id for a in interview_questions}
    async with sessions() as session:
        planned = (await session.get(Interview, interview)).question_ids  # type: ignore[union-attr]
    updated = replace(bank, questions={q.id: q for q in bank if q.id not in planned})
    restarted = make(sessions, updated, scoring)
    items = await deliver(restarted, 10)
    assert [type(i) for i in items] == [SummaryItem]
    assert await restarted.outbox(10) == []
    async with sessions() as session:
        owed = await Repo(session).answers.users_with_pending_work()
    assert 10 not in owed
