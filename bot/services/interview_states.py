"""An interview's state machines: what each move records (which status may follow which is
bot/storage/statuses.py). Every status write of an interview, an asked question or an answer
goes through here, on a loaded row or as the condition of a conditional UPDATE
(bot/storage/repository.py uses `sources` for its own).

    interview: active -> finishing (summary owed) -> finished;  active -> stopped (replaced)
    asked:     open -> grading -> answered;  open -> skipped | closed
    answer:    pending -> graded -> delivered (feedback sent)
"""

from __future__ import annotations

from datetime import datetime

from bot.storage.models import Answer, AskedQuestion, Interview
from bot.storage.statuses import (
    ANSWER_MOVES,
    ASK_MOVES,
    INTERVIEW_MOVES,
    AnswerStatus,
    AskStatus,
    InterviewStatus,
    check_move,
)


def move_interview(interview: Interview, to: InterviewStatus, now: datetime) -> None:
    """finished_at is when it stopped running (the summary may go out later)."""
    check_move(INTERVIEW_MOVES, interview.status, to)
    if interview.status == InterviewStatus.active:
        interview.finished_at = now
    interview.status = to


def move_ask(ask: AskedQuestion, to: AskStatus) -> None:
    check_move(ASK_MOVES, ask.status, to)
    ask.status = to


def move_answer(answer: Answer, to: AnswerStatus, now: datetime) -> None:
    """graded_at is when its grade was stored."""
    check_move(ANSWER_MOVES, answer.status, to)
    if to == AnswerStatus.graded:
        answer.graded_at = now
    answer.status = to
