"""The group round's state machines (bot/services/rounds/states.py): the moves allowed, what a
move records, and that a conditional UPDATE moves a row only from a state allowed to."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.services.rounds.states import (
    QUESTION_MOVES,
    IllegalMove,
    after_results,
    move_question,
    move_round,
    sources,
)
from bot.storage.models import Round, RoundQuestion
from bot.storage.statuses import RoundQuestionStatus, RoundStatus

NOW = datetime(2026, 12, 3, 18, 0, tzinfo=UTC)


def test_a_round_ends_once_and_never_starts_again() -> None:
    round_ = Round(status=RoundStatus.active)
    move_round(round_, RoundStatus.finishing, NOW)
    assert (round_.status, round_.finished_at) == (RoundStatus.finishing, NOW)
    move_round(round_, RoundStatus.finished, NOW)
    for to in RoundStatus:
        with pytest.raises(IllegalMove):
            move_round(round_, to, NOW)


def test_a_question_records_when_it_closed_and_cannot_reopen() -> None:
    question = RoundQuestion(status=RoundQuestionStatus.open)
    move_question(question, RoundQuestionStatus.grading, NOW)
    assert question.closed_at == NOW
    later = datetime(2026, 12, 3, 18, 5, tzinfo=UTC)
    move_question(question, RoundQuestionStatus.graded, later)
    assert question.closed_at == NOW  # closing happened once
    with pytest.raises(IllegalMove):
        move_question(question, RoundQuestionStatus.open, later)
    assert sources(QUESTION_MOVES, RoundQuestionStatus.grading) == {RoundQuestionStatus.open}
    assert RoundQuestionStatus.done not in sources(QUESTION_MOVES, RoundQuestionStatus.done)


def test_after_the_results_the_round_asks_the_next_or_finishes() -> None:
    round_ = Round(status=RoundStatus.active, position=0, question_ids=["a", "b"])
    assert after_results(round_, RoundQuestion(position=0), NOW)  # ask "b"
    assert round_.position == 1 and round_.status == RoundStatus.active
    assert not after_results(round_, RoundQuestion(position=1), NOW)
    assert round_.status == RoundStatus.finishing  # the leaderboard is owed
    stopped = Round(status=RoundStatus.stopped, position=0, question_ids=["a", "b"])
    assert not after_results(stopped, RoundQuestion(position=0), NOW)
    assert stopped.position == 0
