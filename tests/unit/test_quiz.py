"""Quiz rounds: options from the bank's short answers, votes scored 10 or 0, no grader needed."""

from __future__ import annotations

import random

from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.services.quiz import EXPLANATION_LIMIT, build_options, explanation, option_text
from bot.services.rounds import LATE_GRACE, RoundAnswerOutcome, StartOutcome
from bot.services.rounds.items import LeaderboardItem, ResultsItem, RoundQuestionItem
from bot.storage.models import ReviewCard

# The rounds tests' fake clock, stub grader and service fixtures.
from tests.unit.test_rounds import GROUP, clock, service, stub  # noqa: F401


def test_options_are_short_answers_with_same_topic_distractors(bank: QuestionBank) -> None:
    rng = random.Random(7)
    for question in bank:
        ids, right = build_options(question, bank, rng)
        assert ids[right] == question.id and len(set(ids)) == len(ids) == 4
        shared = [set(question.topics) & set(bank.get(i).topics) for i in ids if i != question.id]
        assert any(shared)  # distractors come from related topics first
        for lang in ("en", "ru"):
            assert all(1 <= len(option_text(bank.get(i), lang)) <= 100 for i in ids)
            assert len(explanation(question, lang)) <= EXPLANATION_LIMIT


async def test_quiz_round_scores_votes(service, clock, stub) -> None:  # noqa: F811
    started = await service.start(GROUP, 1, "middle", 2, 20, kind="quiz")
    assert started.outcome is StartOutcome.started
    item = (await service.outbox(GROUP))[0]
    assert isinstance(item, RoundQuestionItem) and len(item.options) == 4
    await service.mark_sent(item, 100, poll_id="p1")
    right, wrong = item.correct_option, (item.correct_option + 1) % 4
    chat, first = await service.poll_answer("p1", 2, "Ann", [wrong])
    assert chat == GROUP and first.outcome is RoundAnswerOutcome.accepted
    _, changed = await service.poll_answer("p1", 2, "Ann", [right])  # a re-vote replaces it
    assert changed.outcome is RoundAnswerOutcome.replaced
    await service.poll_answer("p1", 3, "Bob", [wrong])
    await service.poll_answer("p1", 4, "Cy", [right])
    await service.poll_answer("p1", 4, "Cy", [])  # retracted: no answer at all
    assert (await service.poll_answer("nope", 2, "Ann", [0]))[0] is None
    replied = await service.submit(GROUP, 2, "Ann", 100, "a text reply to the poll message", 5)
    assert replied.outcome is RoundAnswerOutcome.not_a_question
    clock.advance(21)  # Telegram closed the poll; a vote processed now no longer counts
    _, late = await service.poll_answer("p1", 5, "Dan", [right])
    assert late.outcome is RoundAnswerOutcome.closed
    clock.advance(LATE_GRACE.total_seconds())
    await service.expire(GROUP)
    await service.grade_closed(GROUP)
    results = (await service.outbox(GROUP))[0]
    assert isinstance(results, ResultsItem)
    assert [(line.name, line.score) for line in results.lines] == [("Ann", 10.0), ("Bob", 0.0)]
    assert results.correct_option == item.question.id
    assert stub.graded == []  # votes need no model
    async with service.sessions() as session:  # a vote is recognition, not a recall: no review
        assert (await session.scalars(select(ReviewCard))).all() == []
    await service.mark_sent(results, 101)
    second = (await service.outbox(GROUP))[0]
    await service.mark_sent(second, 102, poll_id="p2")
    await service.poll_answer("p2", 2, "Ann", [second.correct_option])  # type: ignore[union-attr]
    _, last = await service.poll_answer("p2", 3, "Bob", [second.correct_option])  # type: ignore[union-attr]
    assert last.complete  # everyone who voted before has voted
    await service.close_current(GROUP)
    await service.grade_closed(GROUP)
    await service.mark_sent((await service.outbox(GROUP))[0], 103)
    board = (await service.outbox(GROUP))[0]
    assert isinstance(board, LeaderboardItem)
    assert [(s.name, s.total, s.rank) for s in board.standings] == [
        ("Ann", 20.0, 1),
        ("Bob", 10.0, 2),
    ]
