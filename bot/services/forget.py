"""`/forget`: everything the bot keeps about one person, deleted.

Rows that belong to the user go (answers, interviews, reviews of questions, daily subscription
and deliveries, group-round answers, the private-feedback choice, the profile). What only names
them is cleared: a round they started keeps running, without `started_by`. Updates Telegram sent
are kept for a day to recognise a repeated delivery; theirs keep only their `update_id`.
"""

from __future__ import annotations

import json

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.storage.models import (
    Answer,
    AskedQuestion,
    DailyDelivery,
    DailySubscription,
    Interview,
    ReceivedUpdate,
    ReviewCard,
    Round,
    RoundAnswer,
    RoundFeedbackOptIn,
    User,
)


async def forget_user(
    sessions: async_sessionmaker[AsyncSession], user_id: int, current_update: int | None = None
) -> None:
    """`current_update`: the update being handled (the confirmation); it is redacted too.
    Other updates not yet handled are left to be handled: they came after the decision."""
    async with sessions() as session, session.begin():
        # Children first: SQLite enforces no foreign keys unless asked, so no cascade is assumed.
        for model in (Answer, AskedQuestion, Interview, DailyDelivery, DailySubscription):
            await session.execute(delete(model).where(model.user_id == user_id))
        await session.execute(delete(RoundAnswer).where(RoundAnswer.user_id == user_id))
        await session.execute(delete(ReviewCard).where(ReviewCard.user_id == user_id))
        await session.execute(
            delete(RoundFeedbackOptIn).where(RoundFeedbackOptIn.user_id == user_id)
        )
        # Round.started_by is a user id. Interview.started_by is not (it is the /interview
        # message's id, for replays), and the user's own interviews are deleted above.
        await session.execute(
            update(Round).where(Round.started_by == user_id).values(started_by=None)
        )
        await session.execute(delete(User).where(User.id == user_id))
        # The id's digits somewhere in the text narrow the scan; the JSON decides.
        candidates = await session.execute(
            select(ReceivedUpdate.update_id, ReceivedUpdate.payload).where(
                ReceivedUpdate.payload.contains(str(user_id)),
                (ReceivedUpdate.handled_at.is_not(None))
                | (ReceivedUpdate.update_id == (current_update or 0)),
            )
        )
        for update_id, payload in candidates.all():
            if _mentions(json.loads(payload), user_id):
                await session.execute(
                    update(ReceivedUpdate)
                    .where(ReceivedUpdate.update_id == update_id)
                    .values(payload=json.dumps({"update_id": update_id}))
                )


def _mentions(value: object, user_id: int) -> bool:
    """Whether the user is in an update: an `id` or `user_id` field anywhere (sender, private
    chat, replied-to message, poll voter…), not a message id that happens to be equal."""
    if isinstance(value, dict):
        return any(
            (key in ("id", "user_id") and item == user_id) or _mentions(item, user_id)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return any(_mentions(item, user_id) for item in value)
    return False
