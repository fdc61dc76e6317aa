"""The state machines of a group round (bot/services/rounds/states.py) and of an interview
(bot/services/interview_states.py): the moves allowed (bot/storage/statuses.py) and what a move
records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.services.interview_states import move_answer, move_ask, move_interview
from bot.services.rounds.states import after_results, move_question, move_round
from bot.storage.models import Answer, AskedQuestion, Interview, Round, RoundQuestion
from bot.storage.statuses import (
    ASK_MOVES,
    ROUND_QUESTION_MOVES,
    AnswerStatus,
    AskStatus,
    IllegalMove,
    InterviewStatus,
    RoundQuestionStatus,
    RoundStatus,
    sources,
)

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
    grading = sources(ROUND_QUESTION_MOVES, RoundQuestionStatus.grading)
    assert grading == {RoundQuestionStatus.open}
    assert RoundQuestionStatus.done not in sources(ROUND_QUESTION_MOVES, RoundQuestionStatus.done)


def test_after_the_results_the_round_asks_the_next_or_finishes() -> None:
    round_ = Round(status=RoundStatus.active, position=0, question_ids=["a", "b"])
    assert after_results(round_, RoundQuestion(position=0), NOW)  # ask "b"
    assert round_.position == 1 and round_.status == RoundStatus.active
    assert not after_results(round_, RoundQuestion(position=1), NOW)
    assert round_.status == RoundStatus.finishing  # the leaderboard is owed
    stopped = Round(status=RoundStatus.stopped, position=0, question_ids=["a", "b"])
    assert not after_results(stopped, RoundQuestion(position=0), NOW)
    assert stopped.position == 0


def test_an_interview_moves_only_forward_and_records_when_it_ended() -> None:
    interview = Interview(status=InterviewStatus.active)
    move_interview(interview, InterviewStatus.finishing, NOW)
    later = datetime(2026, 12, 3, 18, 5, tzinfo=UTC)
    move_interview(interview, InterviewStatus.finished, later)
    assert interview.finished_at == NOW  # when it stopped running, not when the summary went
    with pytest.raises(IllegalMove):
        move_interview(interview, InterviewStatus.active, later)
    answer = Answer(status=AnswerStatus.pending)
    move_answer(answer, AnswerStatus.graded, NOW)
    assert answer.graded_at == NOW
    with pytest.raises(IllegalMove):  # feedback is owed once graded: never graded again
        move_answer(answer, AnswerStatus.pending, NOW)
    ask = AskedQuestion(status=AskStatus.grading)
    with pytest.raises(IllegalMove):  # an answer is being graded: it cannot be skipped now
        move_ask(ask, AskStatus.skipped)
    assert sources(ASK_MOVES, AskStatus.grading) == {AskStatus.open}
