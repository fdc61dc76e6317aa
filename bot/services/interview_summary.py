"""The closing message of an interview: scores, weakest topics, reviews coming up."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.content.loader import QuestionBank
from bot.services.outbox import SummaryItem
from bot.services.reviews import due_within
from bot.storage.models import Interview
from bot.storage.repository import Repo
from bot.storage.statuses import AskStatus

WEAK_BELOW = 7.0  # the "good" verdict's lower bound


async def build_summary(
    session: AsyncSession, bank: QuestionBank, interview: Interview, now: datetime
) -> SummaryItem:
    repo = Repo(session)
    asks = await repo.asked.for_interview(interview.id)
    answers = await repo.answers.for_asks([a.id for a in asks])
    scores: list[tuple[str, float | None]] = []
    by_topic: dict[str, list[float]] = defaultdict(list)
    for ask in asks:
        answer = answers.get(ask.id)
        score = answer.score if answer is not None and answer.score is not None else None
        scores.append((ask.question_id, score))
        question = bank.get(ask.question_id)
        if question is not None and ask.status in (AskStatus.answered, AskStatus.skipped):
            for topic in question.topics:
                by_topic[topic].append(score or 0.0)
    graded = [s for _, s in scores if s is not None]
    topic_avg = sorted((sum(v) / len(v), t) for t, v in by_topic.items())
    return SummaryItem(
        interview_id=interview.id,
        chat_id=interview.chat_id,
        total=len(interview.question_ids),
        answered=len(graded),
        skipped=sum(1 for a in asks if a.status == AskStatus.skipped),
        average=round(sum(graded) / len(graded), 1) if graded else None,
        weakest_topics=[t for avg, t in topic_avg if avg < WEAK_BELOW][:3],
        scores=scores,
        reviews_due_soon=await due_within(session, interview.user_id, now, timedelta(days=1)),
    )
