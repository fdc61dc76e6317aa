"""Usage figures for the bot's operators, counted over one session (bot/services/stats.py
serves them to `/stats` and `python -m bot stats`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import (
    Answer,
    DailyDelivery,
    DailySubscription,
    GroupChat,
    Interview,
    ReceivedUpdate,
    Round,
    User,
)
from bot.storage.statuses import (
    ENDED_ROUND_STATUSES,
    RUNNING_ROUND_STATUSES,
    AnswerStatus,
    DeliveryStatus,
)

HARDEST_MIN_ANSWERS = 3  # fewer graded answers say little about a question
HARDEST_SHOWN = 3


@dataclass(frozen=True)
class QuestionScore:
    question_id: str
    answers: int
    average: float


@dataclass(frozen=True)
class BotStats:
    users: int
    new_users_7d: int
    interviews: int
    answers_graded: int
    answers_graded_24h: int
    answers_pending: int  # stored but not graded yet: a backlog worth watching
    average_score_7d: float | None
    daily_subscribers: int
    daily_sent_24h: int
    daily_failed_24h: int
    groups: int
    rounds_finished: int
    rounds_active: int
    updates_failed_24h: int  # handlers that raised on every try (bot/telegram/update_queue)
    hardest: tuple[QuestionScore, ...]  # lowest average score, graded answers in the last 30 days

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def collect_stats(session: AsyncSession, now: datetime) -> BotStats:
    day, week, month = (
        now - timedelta(days=1),
        now - timedelta(days=7),
        now - timedelta(days=30),
    )
    graded = Answer.graded_at.is_not(None)  # "graded", then "delivered" once sent

    async def count(model: Any, *where: Any) -> int:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)) or 0)

    average = await session.scalar(
        select(func.avg(Answer.score)).where(graded, Answer.graded_at >= week)
    )
    hardest_rows = await session.execute(
        select(Answer.question_id, func.count(), func.avg(Answer.score))
        .where(graded, Answer.graded_at >= month)
        .group_by(Answer.question_id)
        .having(func.count() >= HARDEST_MIN_ANSWERS)
        .order_by(func.avg(Answer.score), Answer.question_id)
        .limit(HARDEST_SHOWN)
    )
    return BotStats(
        users=await count(User),
        new_users_7d=await count(User, User.created_at >= week),
        interviews=await count(Interview),
        answers_graded=await count(Answer, graded),
        answers_graded_24h=await count(Answer, graded, Answer.graded_at >= day),
        answers_pending=await count(Answer, Answer.status == AnswerStatus.pending),
        average_score_7d=None if average is None else round(float(average), 1),
        daily_subscribers=await count(DailySubscription, DailySubscription.active),
        daily_sent_24h=await count(
            DailyDelivery,
            DailyDelivery.status == DeliveryStatus.sent,
            DailyDelivery.sent_at >= day,
        ),
        daily_failed_24h=await count(
            DailyDelivery,
            DailyDelivery.status == DeliveryStatus.failed,
            DailyDelivery.due_at >= day,
        ),
        groups=await count(GroupChat, GroupChat.active),
        rounds_finished=await count(Round, Round.status.in_(ENDED_ROUND_STATUSES)),
        rounds_active=await count(Round, Round.status.in_(RUNNING_ROUND_STATUSES)),
        updates_failed_24h=await count(ReceivedUpdate, ReceivedUpdate.failed_at >= day),
        hardest=tuple(
            QuestionScore(qid, int(n), round(float(avg), 1)) for qid, n, avg in hardest_rows.all()
        ),
    )
