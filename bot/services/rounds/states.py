"""A group round's three state machines: what each move records (which status may follow which
is bot/storage/statuses.py). Every status write in bot/services/rounds goes through here, on a
loaded row (`move_round`, `move_question`), or through bot/storage/round_moves.py as a
conditional UPDATE (the row moves only from a state the table allows, so two replicas racing
for one move cannot both make it).

    round:     active -> finishing (leaderboard owed) -> finished;  active | finishing -> stopped
    question:  open -> grading (closed) -> graded (results owed) -> done;  any -> done (stopped)
    answer:    pending -> graded
"""

from __future__ import annotations

from datetime import datetime

from bot.storage.models import Round, RoundQuestion
from bot.storage.statuses import (
    ROUND_MOVES,
    ROUND_QUESTION_MOVES,
    RoundQuestionStatus,
    RoundStatus,
    check_move,
)


def move_round(round_: Round, to: RoundStatus, now: datetime) -> None:
    """Every move of a round ends its running part: finished_at is when it did."""
    check_move(ROUND_MOVES, round_.status, to)
    round_.status, round_.finished_at = to, now


def move_question(question: RoundQuestion, to: RoundQuestionStatus, now: datetime) -> None:
    """closed_at is when an open question stopped taking answers."""
    check_move(ROUND_QUESTION_MOVES, question.status, to)
    if question.status == RoundQuestionStatus.open:
        question.closed_at = now
    question.status = to


def after_results(round_: Round, question: RoundQuestion, now: datetime) -> bool:
    """The question's results went out: the round moves on to its next question (True: ask it)
    or, after its last, to finishing (the leaderboard is owed). A round no longer active (stopped
    meanwhile) goes nowhere."""
    if round_.status != RoundStatus.active:
        return False
    round_.position = question.position + 1
    if round_.position < len(round_.question_ids):
        return True
    move_round(round_, RoundStatus.finishing, now)
    return False
