"""Group rounds service: a fake clock and a stub grader, the real database and bank."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Update, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.scoring.grade_result import GradeResult, PointResult
from bot.scoring.pitfalls import PitfallHit
from bot.services.rounds import (
    LATE_GRACE,
    RESTART_GRACE,
    RoundAnswerOutcome,
    RoundService,
    RoundUsageError,
    StartOutcome,
    parse_round_args,
    ranks,
)
from bot.services.rounds.items import (
    LeaderboardItem,
    PrivateFeedbackItem,
    ResultsItem,
    RoundQuestionItem,
)
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import ReviewCard, Round, RoundAnswer, RoundQuestion

GROUP, OTHER = -1001, -1002


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class StubScoring:
    """Grades "score N ..." as N; covers the first key point from 5 up, flags "pitfall"."""

    def __init__(self) -> None:
        self.graded: list[str] = []

    def prepare(self, question_ids: list[str]) -> None:
        """Nothing to compute ahead: the stub grades from the text alone."""

    async def grade(self, question: Question, text: str, lang: str | None = None) -> GradeResult:
        self.graded.append(text)
        found = re.search(r"score (\d+(?:\.\d)?)", text)
        score = float(found.group(1)) if found else 0.0
        points = [
            PointResult(p.id, i == 0 and score >= 5, 1.0, None)
            for i, p in enumerate(question.key_points)
        ]
        hits = [PitfallHit(question.pitfalls[0].id, 0.9, text)] if "pitfall" in text else []
        return GradeResult(question.id, lang or "en", score, "good", points, hits)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stub() -> StubScoring:
    return StubScoring()


@pytest.fixture
def service(sessions, bank: QuestionBank, clock: Clock, stub: StubScoring) -> RoundService:
    return RoundService(sessions, bank, stub, clock=clock)  # type: ignore[arg-type]


async def post_question(service: RoundService, chat_id: int, message_id: int) -> RoundQuestionItem:
    items = await service.outbox(chat_id)
    assert len(items) == 1 and isinstance(items[0], RoundQuestionItem)
    await service.mark_sent(items[0], message_id)
    return items[0]


async def results(service: RoundService, chat_id: int) -> ResultsItem:
    await service.grade_closed(chat_id)
    items = await service.outbox(chat_id)
    assert isinstance(items[0], ResultsItem)
    return items[0]


def test_parse_round_args() -> None:
    assert parse_round_args(None).count is None
    args = parse_round_args("middle 3 60")
    assert (args.level, args.count, args.seconds, args.stop) == ("middle", 3, 60, False)
    assert parse_round_args("2 senior").level == "senior"
    assert parse_round_args("STOP").stop
    for bad in ("expert", "0", "21", "3 5", "3 60 7", "middle middle", "stop now", "3 99999"):
        with pytest.raises(RoundUsageError):
            parse_round_args(bad)
    assert parse_round_args("3 2", min_seconds=1).seconds == 2


def test_ranks_share_places_on_ties() -> None:
    assert ranks([9.0, 9.0, 7.0, 5.0, 5.0]) == [1, 1, 3, 4, 4]
    assert ranks([]) == []


async def test_two_question_round_ranks_and_leaderboard(
    service: RoundService, clock: Clock, stub: StubScoring
) -> None:
    await service.ensure_group(GROUP, "ML club", "en")
    started = await service.start(GROUP, 1, "junior", 2, 60)
    assert started.outcome is StartOutcome.started and started.count == 2
    first = await post_question(service, GROUP, 500)
    assert (first.position, first.total, first.seconds) == (1, 2, 60)

    ok = await service.submit(GROUP, 11, "Ann", 500, "score 4 first try", 601)
    assert ok.outcome is RoundAnswerOutcome.accepted and not ok.complete
    again = await service.submit(GROUP, 11, "Ann", 500, "score 9 better answer", 602)
    assert again.outcome is RoundAnswerOutcome.replaced
    edit = await service.submit(GROUP, 12, "Bob", 500, "score 6 with pitfall", 603)
    assert edit.outcome is RoundAnswerOutcome.accepted
    assert (await service.submit(GROUP, 13, "<Cy>", 500, "score 2 three words", 604)).outcome == (
        RoundAnswerOutcome.accepted
    )
    edited = await service.submit(GROUP, 12, "Bob", 500, "score 7 pitfall", 603, edited=True)
    assert edited.outcome is RoundAnswerOutcome.replaced
    # Not yet: the deadline is 60 s away, and no one is "expected" on the first question.
    assert await service.due() == []
    clock.advance(61)
    late = await service.submit(GROUP, 14, "Dan", 500, "score 10 too late here", 605)
    assert late.outcome is RoundAnswerOutcome.closed
    assert await service.due() == []  # replies sent in time may still be on their way
    clock.advance(LATE_GRACE.total_seconds())
    assert await service.due() == [GROUP]
    assert await service.expire() == [GROUP]
    item = await results(service, GROUP)
    assert [(line.name, line.score, line.rank) for line in item.lines] == [
        ("Ann", 9.0, 1),
        ("Bob", 7.0, 2),
        ("<Cy>", 2.0, 3),
    ]
    assert item.best_covered == [item.question.key_points[0].id]  # type: ignore[union-attr]
    assert item.pitfalls == {item.question.pitfalls[0].id: 1}  # type: ignore[union-attr]
    assert sorted(stub.graded) == [
        "score 2 three words",
        "score 7 pitfall",
        "score 9 better answer",
    ]
    await service.mark_sent(item, 700)

    second = await post_question(service, GROUP, 800)
    assert second.position == 2 and second.question.id != first.question.id
    await service.submit(GROUP, 12, "Bob", 800, "score 8 second answer", 801)
    await service.submit(GROUP, 13, "<Cy>", 800, "score 8 second answer", 802)
    done = await service.submit(GROUP, 11, "Ann", 800, "I don't know", 803)
    assert done.complete  # everyone who answered before has answered
    assert await service.close_current(GROUP)
    item = await results(service, GROUP)
    assert [(line.name, line.rank) for line in item.lines] == [("Bob", 1), ("<Cy>", 1), ("Ann", 3)]
    await service.mark_sent(item, 900)

    board = (await service.outbox(GROUP))[0]
    assert isinstance(board, LeaderboardItem)
    assert [(s.name, s.total, s.rank) for s in board.standings] == [
        ("Bob", 15.0, 1),
        ("<Cy>", 10.0, 2),
        ("Ann", 9.0, 3),
    ]
    await service.mark_sent(board, 901)
    assert await service.outbox(GROUP) == []
    assert await service.active_round(GROUP) is None
    assert len(stub.graded) == 6  # every final answer graded exactly once
    # Each participant's graded answer is a spaced-repetition review of that question for them.
    async with service.sessions() as session:
        cards = (await session.scalars(select(ReviewCard))).all()
    by_user = {(c.user_id, c.question_id): c for c in cards}
    assert len(cards) == 6 and all(c.reviews == 1 for c in cards)
    ann_first, ann_second = by_user[11, first.question.id], by_user[11, second.question.id]
    assert ann_second.due < ann_first.due  # "I don't know" comes back before a 9/10 answer


async def test_bad_answers_and_one_round_per_group(service: RoundService, clock: Clock) -> None:
    await service.start(GROUP, 1, "junior", 1, 30)
    again = await service.start(GROUP, 1, "middle", 1, 30)
    assert again.outcome is StartOutcome.already_running
    await post_question(service, GROUP, 50)
    assert (await service.submit(GROUP, 2, "A", None, "score 5 no reply")).outcome is (
        RoundAnswerOutcome.not_a_question
    )
    assert (await service.submit(GROUP, 2, "A", 49, "score 5 wrong message")).outcome is (
        RoundAnswerOutcome.not_a_question
    )
    assert (await service.submit(OTHER, 2, "A", 50, "score 5 other chat")).outcome is (
        RoundAnswerOutcome.not_a_question
    )
    assert (
        await service.submit(GROUP, 2, "A", 50, "short")
    ).outcome is RoundAnswerOutcome.too_short
    first = await service.submit(GROUP, 2, "A", 50, "score 5 a real answer", 60)
    assert first.outcome is RoundAnswerOutcome.accepted
    same = await service.submit(GROUP, 2, "A", 50, "score 5 a real answer", 60)
    assert same.outcome is RoundAnswerOutcome.duplicate
    huge = await service.submit(GROUP, 3, "B", 50, "score 3 " + "word " * 5000, 61)
    assert huge.outcome is RoundAnswerOutcome.accepted
    async with service.sessions() as session:
        lengths = (await session.scalars(select(func.length(RoundAnswer.text)))).all()
    assert max(lengths) == 4096
    # A second group runs its own round at the same time.
    assert (await service.start(OTHER, 9, None, 1, 30)).outcome is StartOutcome.started
    await post_question(service, OTHER, 50)  # the same message id in another chat
    other = await service.submit(OTHER, 2, "A", 50, "score 1 in the other group", 62)
    assert other.outcome is RoundAnswerOutcome.accepted
    clock.advance(31 + LATE_GRACE.total_seconds())
    assert sorted(await service.expire()) == [OTHER, GROUP]
    assert [line.score for line in (await results(service, GROUP)).lines] == [5.0, 3.0]
    assert [line.score for line in (await results(service, OTHER)).lines] == [1.0]
    old = await service.submit(GROUP, 4, "C", 50, "score 9 answer to an old question", 63)
    assert old.outcome is RoundAnswerOutcome.closed


async def test_stop_finishes_with_results_and_removal_ends_silently(
    service: RoundService, clock: Clock
) -> None:
    assert not await service.stop(GROUP)
    await service.start(GROUP, 1, "senior", 5, 30)
    await post_question(service, GROUP, 10)
    await service.submit(GROUP, 2, "A", 10, "score 6 before the stop", 11)
    assert await service.stop(GROUP)
    item = await results(service, GROUP)
    assert item.total == 1 and item.lines[0].score == 6.0
    await service.mark_sent(item, 12)
    board = (await service.outbox(GROUP))[0]
    assert isinstance(board, LeaderboardItem) and board.questions == 1
    await service.mark_sent(board, 13)

    await service.start(GROUP, 1, "senior", 5, 30)
    await post_question(service, GROUP, 20)
    await service.submit(GROUP, 2, "A", 20, "score 6 before removal", 21)
    assert await service.bot_removed(GROUP)
    assert await service.outbox(GROUP) == []
    assert await service.due() == []
    assert not (await service.group(GROUP)).active  # type: ignore[union-attr]
    assert (await service.start(GROUP, 1)).outcome is StartOutcome.started  # re-added later


async def test_state_survives_a_new_service(
    sessions, bank: QuestionBank, service: RoundService, clock: Clock, stub: StubScoring
) -> None:
    await service.start(GROUP, 1, "middle", 2, 30)
    await post_question(service, GROUP, 10)
    await service.submit(GROUP, 2, "A", 10, "score 7 stored before the crash", 11)
    clock.advance(45)
    # A fresh process: nothing in memory, the deadline and the answer come from the database.
    fresh = RoundService(sessions, bank, stub, clock=clock)  # type: ignore[arg-type]
    clock.advance(RESTART_GRACE.total_seconds())  # replies waiting in Telegram are read first
    assert await fresh.due() == [GROUP]
    await fresh.expire(GROUP)
    item = await results(fresh, GROUP)
    assert item.lines[0].score == 7.0


async def test_all_time_leaderboard(service: RoundService) -> None:
    for answer in ("score 4 first round", "score 5 second round"):
        await service.start(GROUP, 1, "junior", 1, 30)
        await post_question(service, GROUP, 10 if "first" in answer else 20)
        await service.submit(GROUP, 2, "A", 10 if "first" in answer else 20, answer)
        await service.submit(GROUP, 3, "B", 10 if "first" in answer else 20, "score 8 always good")
        await service.close_current(GROUP)
        for item in [await results(service, GROUP)]:
            await service.mark_sent(item, None)
        for item in await service.outbox(GROUP):
            await service.mark_sent(item, None)
    top = await service.leaderboard(GROUP)
    assert [(s.name, s.total, s.answers, s.rank) for s in top] == [
        ("B", 16.0, 2, 1),
        ("A", 9.0, 2, 2),
    ]
    assert await service.leaderboard(OTHER) == []


async def test_an_older_message_never_replaces_a_newer_one(service: RoundService) -> None:
    """Updates are handled concurrently: the later reply (higher message id) wins."""
    await service.start(GROUP, 1, "junior", 1, 30)
    await post_question(service, GROUP, 10)
    assert (await service.submit(GROUP, 2, "A", 10, "score 8 the newer reply", 12)).outcome is (
        RoundAnswerOutcome.accepted
    )
    stale = await service.submit(GROUP, 2, "A", 10, "score 1 the older reply", 11)
    assert stale.outcome is RoundAnswerOutcome.duplicate
    edit = await service.submit(GROUP, 2, "A", 10, "score 3 an edit of it", 11, edited=True)
    assert edit.outcome is RoundAnswerOutcome.replaced  # an edit before the deadline counts
    await service.close_current(GROUP)
    assert [line.score for line in (await results(service, GROUP)).lines] == [3.0]


async def test_opted_in_participants_are_owed_private_feedback(service: RoundService) -> None:
    await service.set_private_feedback(2, True)
    await service.set_private_feedback(3, True)
    await service.set_private_feedback(3, False)  # changed their mind
    await service.start(GROUP, 1, "junior", 1, 30)
    await post_question(service, GROUP, 10)
    await service.submit(GROUP, 2, "A", 10, "score 6 with pitfall here", 11)
    await service.submit(GROUP, 3, "B", 10, "score 8 opted out", 12)
    await service.close_current(GROUP)
    await service.mark_sent(await results(service, GROUP), 13)
    owed = [i for i in await service.outbox(GROUP) if isinstance(i, PrivateFeedbackItem)]
    assert [(i.user_id, i.score, i.chat_id) for i in owed] == [(2, 6.0, GROUP)]
    board = next(i for i in await service.outbox(GROUP) if isinstance(i, LeaderboardItem))
    await service.mark_sent(board, 14)
    assert await service.due() == [GROUP]  # after a restart the ticker still owes the feedback
    item = owed[0]
    assert item.covered == [item.question.key_points[0].id]
    assert item.missed == [k.id for k in item.question.key_points[1:]]
    assert item.pitfalls == [item.question.pitfalls[0].id]
    await service.mark_sent(item, None)  # never started the bot privately: not retried
    assert not [i for i in await service.outbox(GROUP) if isinstance(i, PrivateFeedbackItem)]
    assert await service.due() == []


async def test_an_answer_stored_while_its_question_closes_is_still_graded(
    service: RoundService, sessions, stub: StubScoring
) -> None:
    """The race: an answer whose transaction saw the question open commits after the closing
    pass listed the pending answers. It must be graded, not left pending behind "graded"."""
    await service.start(GROUP, 1, "junior", 1, 60)
    await post_question(service, GROUP, 500)
    await service.submit(GROUP, 11, "Ann", 500, "score 6 on time", 601)
    assert await service.close_current(GROUP)

    grade = stub.grade

    async def grade_then_a_late_commit(question, text, lang=None):  # type: ignore[no-untyped-def]
        if text == "score 6 on time":
            async with sessions() as session, session.begin():
                rq_id = await session.scalar(select(RoundAnswer.round_question_id))
                session.add(
                    RoundAnswer(
                        round_question_id=rq_id, user_id=12, name="Bob", message_id=602,
                        text="score 8 slipped in", language="en",
                    )
                )  # fmt: skip
        return await grade(question, text, lang)

    stub.grade = grade_then_a_late_commit  # type: ignore[method-assign]
    item = await results(service, GROUP)
    assert [(line.name, line.score) for line in item.lines] == [("Bob", 8.0), ("Ann", 6.0)]
    async with sessions() as session:
        statuses = set(await session.scalars(select(RoundAnswer.status)))
    assert statuses == {"graded"}


async def test_lateness_is_judged_by_when_telegram_received_the_reply(
    service: RoundService, clock: Clock
) -> None:
    await service.start(GROUP, 1, "junior", 1, 60)
    await post_question(service, GROUP, 500)
    deadline = clock.now + timedelta(seconds=60)
    clock.advance(61)  # the bot processes these a second after the deadline
    in_time = await service.submit(
        GROUP,
        11,
        "Ann",
        500,
        "score 6 sent just in time",
        601,
        sent_at=deadline - timedelta(seconds=1),
    )
    assert in_time.outcome is RoundAnswerOutcome.accepted
    late = await service.submit(
        GROUP, 12, "Bob", 500, "score 9 sent too late", 602, sent_at=deadline
    )
    assert late.outcome is RoundAnswerOutcome.closed
    edited_late = await service.submit(
        GROUP, 11, "Ann", 500, "score 9 edited after it", 601, edited=True, sent_at=deadline
    )
    assert edited_late.outcome is RoundAnswerOutcome.closed
    clock.advance(LATE_GRACE.total_seconds())
    assert await service.expire() == [GROUP]
    after_close = await service.submit(
        GROUP,
        13,
        "Cy",
        500,
        "score 9 claims an early time",
        603,
        sent_at=deadline - timedelta(seconds=30),
    )
    assert after_close.outcome is RoundAnswerOutcome.closed  # once closed, closed
    item = await results(service, GROUP)
    assert [(line.name, line.score) for line in item.lines] == [("Ann", 6.0)]


async def test_one_running_round_per_group_is_a_database_rule(
    shared_db: str, bank: QuestionBank, clock: Clock, stub: StubScoring
) -> None:
    """Two bot processes (two engines) starting rounds in one group at once: one round runs.
    The database itself refuses a second running round, whatever the code above it does."""
    engines = [create_engine(shared_db), create_engine(shared_db)]
    try:
        a, b = (
            RoundService(create_session_factory(e), bank, stub, clock=clock)  # type: ignore[arg-type]
            for e in engines
        )
        await a.ensure_group(GROUP, "ML club", "en")
        outcomes = await asyncio.gather(*(s.start(GROUP, 1, "junior", 2, 60) for s in (a, b) * 3))
        assert sorted(o.outcome for o in outcomes) == sorted(
            [StartOutcome.started] + [StartOutcome.already_running] * 5
        )
        async with create_session_factory(engines[1])() as session:
            session.add(Round(chat_id=GROUP, level="junior", question_ids=[], seconds=60))
            with pytest.raises(IntegrityError):
                await session.commit()
        other = await b.start(OTHER, 1, "junior", 1, 60)  # the rule is per group
        assert other.outcome is StartOutcome.started
    finally:
        for engine in engines:
            await engine.dispose()


async def test_after_a_restart_replies_sent_in_time_are_read_before_the_question_closes(
    sessions, bank: QuestionBank, service: RoundService, clock: Clock, stub: StubScoring
) -> None:
    await service.start(GROUP, 1, "junior", 1, 60)
    await post_question(service, GROUP, 500)
    deadline = clock.now + timedelta(seconds=60)
    clock.advance(300)  # the bot was down past the deadline; replies waited in Telegram
    fresh = RoundService(sessions, bank, stub, clock=clock)  # type: ignore[arg-type]
    assert await fresh.due() == [] and await fresh.expire() == []  # the backlog comes first
    clock.advance(1)
    sent_in_time = await fresh.submit(
        GROUP, 11, "Ann", 500, "score 7 sent before the deadline", 601,
        sent_at=deadline - timedelta(seconds=5),
    )  # fmt: skip
    assert sent_in_time.outcome is RoundAnswerOutcome.accepted
    sent_late = await fresh.submit(
        GROUP, 12, "Bob", 500, "score 9 sent after the deadline", 602,
        sent_at=deadline + timedelta(seconds=5),
    )  # fmt: skip
    assert sent_late.outcome is RoundAnswerOutcome.closed
    clock.advance(RESTART_GRACE.total_seconds())
    assert await fresh.due() == [GROUP]
    assert await fresh.expire() == [GROUP]
    item = await results(fresh, GROUP)
    assert [(line.name, line.score) for line in item.lines] == [("Ann", 7.0)]


async def test_stop_while_the_first_question_is_being_posted(
    service: RoundService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/round stop commits after the bot posted the first question and before its record of
    the message id (seen under load in the command-table test): the stop withdraws the question,
    which has no message id yet, and the record must neither fail nor bring it back. The hooks
    run the stop inside mark_sent between what it reads and what it writes: just before the
    conditional UPDATE it makes, or just after the read of a read-then-write record (which then
    failed with StaleDataError)."""
    await service.ensure_group(GROUP, "ML club", "en")
    await service.start(GROUP, 1, "junior", 2, 60)
    (item,) = await service.outbox(GROUP)
    assert isinstance(item, RoundQuestionItem)
    stopped: list[bool] = []
    execute, get = AsyncSession.execute, AsyncSession.get

    async def stop_once() -> None:
        if not stopped:
            stopped.append(False)  # the stop's own statements must not stop it again
            stopped[0] = await service.stop(GROUP)

    async def stop_then_update(self: AsyncSession, statement: Any, *args: Any, **kw: Any) -> Any:
        table = statement.table if isinstance(statement, Update) else None
        if getattr(table, "name", None) == RoundQuestion.__tablename__:
            await stop_once()
        return await execute(self, statement, *args, **kw)

    async def read_then_stop(self: AsyncSession, entity: Any, ident: Any, **kw: Any) -> Any:
        row = await get(self, entity, ident, **kw)
        if entity is RoundQuestion:
            await stop_once()
        return row

    monkeypatch.setattr(AsyncSession, "execute", stop_then_update)
    monkeypatch.setattr(AsyncSession, "get", read_then_stop)
    await service.mark_sent(item, 500)
    monkeypatch.undo()
    assert stopped == [True]  # the interleaving happened, and the stop took effect
    async with service.sessions() as session:
        assert (await session.scalars(select(RoundQuestion))).all() == []  # not brought back
    await service.grade_closed(GROUP)
    (board,) = await service.outbox(GROUP)  # nothing more to ask: only the leaderboard
    assert isinstance(board, LeaderboardItem) and board.questions == 0
    await service.mark_sent(board, 501)
    assert await service.active_round(GROUP) is None and await service.outbox(GROUP) == []
