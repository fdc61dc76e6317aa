"""Quiz-poll votes in a user's history: not graded answers, so `/report` and `/progress` leave
them out, while `/export` lists each as a vote with the option the user picked, in their
language."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.content.loader import QuestionBank
from bot.content.schema import Level
from bot.services.history import history, history_csv
from bot.services.progress import load_progress
from bot.services.quiz import option_text
from bot.services.readiness import load_readiness, weight
from bot.storage.models import GroupChat, Round, RoundAnswer, RoundQuestion, User
from bot.storage.statuses import RoundAnswerStatus, RoundKind, RoundStatus

Sessions = async_sessionmaker[AsyncSession]
GROUP = -100
T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)
GRADED = RoundAnswerStatus.graded
# zero-grad is the bank's only junior autograd question; the options are other questions' ids.
OPTIONS = ["adam-optimizer", "zero-grad", "autograd", "attention"]


async def _answer_then_wrong_vote(sessions: Sessions) -> None:
    """User 1 answers zero-grad in a round (9/10), a day later picks a wrong option in a quiz
    poll on it, and also clicks the right option of a quiz poll on adam-optimizer, never
    answered in words."""
    async with sessions() as session, session.begin():
        session.add_all([User(id=1, language="ru"), GroupChat(id=GROUP)])
        await session.flush()
        spoken = Round(
            chat_id=GROUP,
            level="junior",
            question_ids=["zero-grad"],
            seconds=60,
            status=RoundStatus.finished,
        )
        quiz = Round(
            chat_id=GROUP,
            kind=RoundKind.quiz,
            level="junior",
            question_ids=["zero-grad", "adam-optimizer"],
            seconds=30,
        )
        session.add_all([spoken, quiz])
        await session.flush()
        asked = RoundQuestion(
            round_id=spoken.id, chat_id=GROUP, position=0, question_id="zero-grad"
        )
        polled = RoundQuestion(
            round_id=quiz.id, chat_id=GROUP, position=0, question_id="zero-grad",
            poll_id="p1", options=OPTIONS, correct_option=1,
        )  # fmt: skip
        lucky = RoundQuestion(
            round_id=quiz.id, chat_id=GROUP, position=1, question_id="adam-optimizer",
            poll_id="p2", options=OPTIONS, correct_option=0,
        )  # fmt: skip
        session.add_all([asked, polled, lucky])
        await session.flush()
        session.add_all(
            [
                RoundAnswer(round_question_id=asked.id, user_id=1, name="Ann", text="обнуляет",
                            language="ru", status=GRADED, score=9.0, verdict="excellent",
                            answered_at=T0, graded_at=T0),
                # As rounds.answers stores a vote: the chosen option's id, 10 or 0 points.
                RoundAnswer(round_question_id=polled.id, user_id=1, name="Ann",
                            text="adam-optimizer", language="en", status=GRADED, score=0.0,
                            verdict="wrong", answered_at=T0 + timedelta(days=1),
                            graded_at=T0 + timedelta(days=1)),
                RoundAnswer(round_question_id=lucky.id, user_id=1, name="Ann",
                            text="adam-optimizer", language="en", status=GRADED, score=10.0,
                            verdict="correct", answered_at=T0 + timedelta(days=1, minutes=1),
                            graded_at=T0 + timedelta(days=1, minutes=1)),
            ]
        )  # fmt: skip


async def test_readiness_keeps_the_graded_answer_over_a_later_wrong_vote(
    sessions: Sessions, bank: QuestionBank
) -> None:
    await _answer_then_wrong_vote(sessions)
    report = await load_readiness(sessions, bank, 1, "ru", "junior")
    autograd = next(t for t in report.topics if t.topic == "autograd")
    junior = autograd.at(Level.junior)
    peers = [
        q for q in bank.questions.values() if "autograd" in q.topics and q.level == Level.junior
    ]
    expected = 9.0 * weight(bank.questions["zero-grad"]) / sum(weight(q) for q in peers)
    assert junior is not None and junior.answered == 1
    assert junior.score == pytest.approx(expected)
    # The lucky click on adam-optimizer is no answer: only zero-grad counts as answered.
    assert report.answered == 1
    assert all(item.score is None for item in report.practice if item.question.id != "zero-grad")


async def test_progress_plots_only_the_graded_answer(
    sessions: Sessions, bank: QuestionBank
) -> None:
    await _answer_then_wrong_vote(sessions)
    s = await load_progress(sessions, bank, 1, "ru", date(2026, 11, 2))
    assert s.points == ((T0, 9.0),)
    assert s.total_answers == 1
    assert [(r.question_id, r.score) for r in s.recent] == [("zero-grad", 9.0)]
    assert [(t.topic, t.mastery) for t in s.topics] == [("autograd", 9.0), ("training", 9.0)]


async def test_export_shows_the_option_picked_as_a_vote(
    sessions: Sessions, bank: QuestionBank
) -> None:
    await _answer_then_wrong_vote(sessions)
    rows = await history(sessions, bank, 1, "ru")
    picked = option_text(bank.questions["adam-optimizer"], "ru")
    assert [(r.where, r.question_id, r.score, r.verdict, r.answer) for r in rows] == [
        ("group", "zero-grad", 9.0, "excellent", "обнуляет"),
        ("quiz", "zero-grad", None, "wrong", picked),
        ("quiz", "adam-optimizer", None, "correct", picked),
    ]
    assert [r.is_vote for r in rows] == [False, True, True]
    _, wrong, _ = csv.DictReader(io.StringIO(history_csv(rows).decode("utf-8-sig")))
    assert (wrong["where"], wrong["score"], wrong["verdict"]) == ("quiz", "", "wrong")
    assert wrong["answer"] == picked != "adam-optimizer"  # what was shown, not an internal id
    # In the user's language.
    assert (await history(sessions, bank, 1, "en"))[1].answer == option_text(
        bank.questions["adam-optimizer"], "en"
    )
