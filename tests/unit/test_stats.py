"""Operator figures: what /stats counts, and which questions it calls hardest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.services.stats import StatsService
from bot.storage.models import (
    Answer,
    AskedQuestion,
    DailyDelivery,
    DailySubscription,
    GroupChat,
    Interview,
    Round,
    User,
)
from bot.telegram.stats_rendering import render_stats

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def answer(ask_id: int, question: str, score: float | None, graded: datetime | None) -> Answer:
    return Answer(
        asked_id=ask_id,
        user_id=1,
        question_id=question,
        text="…",
        language="en",
        status="pending" if graded is None else "delivered",
        score=score,
        graded_at=graded,
    )


async def test_figures_count_what_they_name(sessions) -> None:
    hours = lambda n: NOW - timedelta(hours=n)  # noqa: E731
    # (question, score, graded at): zero-grad has three recent answers, view-vs-reshape three
    # too but one is 40 days old, autograd only two.
    rows = [
        ("zero-grad", 2.0, hours(1)),
        ("zero-grad", 3.0, hours(30)),
        ("zero-grad", 4.0, hours(100)),
        ("view-vs-reshape", 8.0, hours(2)),
        ("view-vs-reshape", 6.0, hours(3)),
        ("view-vs-reshape", 0.0, hours(24 * 40)),
        ("autograd", 0.0, hours(5)),
        ("autograd", 1.0, hours(6)),
        ("attention", 5.0, hours(7)),
        ("attention", 5.0, hours(8)),
        ("attention", 5.0, hours(9)),
        ("dropout", None, None),  # stored, not graded yet
    ]
    async with sessions() as session, session.begin():
        session.add_all(
            [
                User(id=1, created_at=hours(24 * 30)),
                User(id=2, created_at=hours(2)),
                GroupChat(id=-10, active=True),
                GroupChat(id=-11, active=False),
            ]
        )
        await session.flush()
        session.add(Interview(id=1, user_id=1, chat_id=1, level="junior", question_ids=[]))
        for n, (question, _, _) in enumerate(rows, 1):
            session.add(AskedQuestion(id=n, user_id=1, chat_id=1, question_id=question))
        await session.flush()
        for n, (question, score, graded) in enumerate(rows, 1):
            session.add(answer(n, question, score, graded))
        session.add_all(
            [
                DailySubscription(user_id=1, chat_id=1, local_time="09:00", active=True),
                DailySubscription(user_id=2, chat_id=2, local_time="09:00", active=False),
                DailyDelivery(
                    user_id=1, chat_id=1, local_date="2026-11-29", due_at=hours(3),
                    status="sent", sent_at=hours(3),
                ),
                DailyDelivery(
                    user_id=2, chat_id=2, local_date="2026-11-29", due_at=hours(4),
                    status="failed",
                ),
                DailyDelivery(
                    user_id=1, chat_id=1, local_date="2026-11-20", due_at=hours(200),
                    status="sent", sent_at=hours(200),
                ),
            ]
        )  # fmt: skip
        await session.flush()
        session.add_all(
            [
                Round(chat_id=-10, level="junior", question_ids=[], seconds=60, status="finished"),
                Round(chat_id=-10, level="junior", question_ids=[], seconds=60, status="stopped"),
                Round(chat_id=-11, level="junior", question_ids=[], seconds=60, status="active"),
            ]
        )

    stats = await StatsService(sessions).collect(NOW)

    assert (stats.users, stats.new_users_7d, stats.interviews) == (2, 1, 1)
    assert (stats.answers_graded, stats.answers_graded_24h, stats.answers_pending) == (11, 8, 1)
    recent = [2.0, 3.0, 4.0, 8.0, 6.0, 0.0, 1.0, 5.0, 5.0, 5.0]  # graded within 7 days
    assert stats.average_score_7d == round(sum(recent) / len(recent), 1)
    assert (stats.daily_subscribers, stats.daily_sent_24h, stats.daily_failed_24h) == (1, 1, 1)
    assert (stats.groups, stats.rounds_finished, stats.rounds_active) == (1, 2, 1)
    # autograd has too few answers; the 40-day-old 0 does not drag view-vs-reshape down.
    assert [(q.question_id, q.answers, q.average) for q in stats.hardest] == [
        ("zero-grad", 3, 3.0),
        ("attention", 3, 5.0),
    ]

    text = render_stats(stats, "ru").render()[0]
    assert "Пользователи: 2" in text and "• zero-grad: 3.0/10 (3 ответа)" in text


async def test_an_empty_database_reads_as_zeros(sessions) -> None:
    stats = await StatsService(sessions).collect(NOW)
    assert stats.users == stats.answers_graded == 0
    assert stats.average_score_7d is None and stats.hardest == ()
    assert "Average score, 7 days: —" in render_stats(stats, "en").render()[0]
