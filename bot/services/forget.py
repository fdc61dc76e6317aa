"""`/forget`: everything the bot keeps about one person, deleted.

Rows that belong to the user go (answers, interviews, reviews of questions, daily subscription
and deliveries, group-round answers, the private-feedback choice, the profile). What only names
them is cleared: a round they started keeps running, without `started_by`. Updates Telegram sent
are kept for a day to recognise a repeated delivery; theirs keep only their `update_id`, and so
do others' that quote what the bot wrote about them (a reply to a round's results quotes their
name and score).
"""

from __future__ import annotations

import json

from sqlalchemy import delete, or_, select, update
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
        names = await _names(session, user_id)  # read before the rows that hold them go
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
        # The id's digits (or a name) somewhere in the text narrow the scan; the JSON decides.
        candidates = await session.execute(
            select(ReceivedUpdate.update_id, ReceivedUpdate.payload).where(
                or_(
                    ReceivedUpdate.payload.contains(str(user_id)),
                    *(
                        ReceivedUpdate.payload.contains(_in_json(name), autoescape=True)
                        for name in names
                    ),
                ),
                (ReceivedUpdate.handled_at.is_not(None))
                | (ReceivedUpdate.update_id == (current_update or 0)),
            )
        )
        for update_id, payload in candidates.all():
            data = json.loads(payload)
            if _mentions(data, user_id) or any(_bot_wrote(data, name) for name in names):
                await session.execute(
                    update(ReceivedUpdate)
                    .where(ReceivedUpdate.update_id == update_id)
                    .values(payload=json.dumps({"update_id": update_id}))
                )


async def _names(session: AsyncSession, user_id: int) -> set[str]:
    """What the bot calls the user in what it writes: the profile's first name, and the name
    each group-round answer was posted under (Telegram's full name)."""
    found = set(
        await session.scalars(select(RoundAnswer.name).where(RoundAnswer.user_id == user_id))
    )
    found.add((await session.scalar(select(User.first_name).where(User.id == user_id))) or "")
    return {name for name in found if name.strip()}


def _in_json(text: str) -> str:
    """`text` as it appears inside a JSON string of a stored update (UTF-8, not \\u escapes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


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


def _bot_wrote(value: object, name: str) -> bool:
    """Whether a message a bot sent, quoted anywhere in an update (the message replied to), has
    `name` in its text: a round's results and leaderboards list participants by name."""
    if isinstance(value, dict):
        sender = value.get("from_user", value.get("from"))
        if isinstance(sender, dict) and sender.get("is_bot"):
            written = f"{value.get('text') or ''}\n{value.get('caption') or ''}"
            if name in written:
                return True
        return any(_bot_wrote(item, name) for item in value.values())
    if isinstance(value, list):
        return any(_bot_wrote(item, name) for item in value)
    return False
