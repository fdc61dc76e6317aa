"""An interview's state machines: what each move records (which status may follow which is
bot/storage/statuses.py). Every status write of an interview, an asked question or an answer
goes through here, on a loaded row or as the condition of a conditional UPDATE
(bot/storage/repository.py uses `sources` for its own). So does an interview's position: its
next question is asked here, or it moves to finishing after its last.

    interview: active -> finishing (summary owed) -> finished;  active -> stopped (replaced)
    asked:     open -> grading -> answered;  open -> skipped | closed
    answer:    pending -> graded -> delivered (feedback sent)
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

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


def ask_current(session: AsyncSession, interview: Interview) -> None:
    """Put the interview's question at its position (the outbox sends it)."""
    session.add(
        AskedQuestion(
            user_id=interview.user_id,
            chat_id=interview.chat_id,
            question_id=interview.question_ids[interview.position],
            interview_id=interview.id,
            position=interview.position,
        )
    )


async def advance(session: AsyncSession, interview_id: int | None, now: datetime) -> None:
    """A question of the interview was answered, skipped or retired: on to its next question,
    or, after its last, to finishing (the summary is owed). A question asked outside any
    interview (a daily one: `interview_id` None), or of an interview no longer active, moves
    nothing."""
    if interview_id is None:
        return
    interview = await session.get(Interview, interview_id)
    if interview is None or interview.status != InterviewStatus.active:
        return
    interview.position += 1
    if interview.position < len(interview.question_ids):
        ask_current(session, interview)
    else:
        move_interview(interview, InterviewStatus.finishing, now)
