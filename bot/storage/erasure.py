"""The queries of `/forget` (bot/services/forget.py): one user's rows deleted, what only names
them cleared, and the stored updates that may mention them found and redacted. Never commits."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

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


class ErasureRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    async def names(self, user_id: int) -> set[str]:
        """What the bot calls the user in what it writes: the profile's first name, and the
        name each group-round answer was posted under (Telegram's full name)."""
        session = self.session
        found = set(
            await session.scalars(select(RoundAnswer.name).where(RoundAnswer.user_id == user_id))
        )
        found.add((await session.scalar(select(User.first_name).where(User.id == user_id))) or "")
        return {name for name in found if name.strip()}

    async def delete_user(self, user_id: int) -> None:
        """The user's rows, children first: SQLite enforces no foreign keys unless asked, so no
        cascade is assumed. A round they started keeps running, without `started_by`."""
        session = self.session
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

    async def updates_containing(
        self, user_id: int, names: Iterable[str], current_update: int | None
    ) -> Sequence[tuple[int, str]]:
        """(update id, payload) of handled updates (and the one being handled) whose text has
        the id's digits or one of the names: candidates only, the caller reads the JSON."""
        rows = await self.session.execute(
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
        return [(update_id, payload) for update_id, payload in rows]

    async def redact(self, update_id: int) -> None:
        """Keep only the update's id: enough to recognise a repeated delivery."""
        await self.session.execute(
            update(ReceivedUpdate)
            .where(ReceivedUpdate.update_id == update_id)
            .values(payload=json.dumps({"update_id": update_id}))
        )


def _in_json(text: str) -> str:
    """`text` as it appears inside a JSON string of a stored update (UTF-8, not \\u escapes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]
