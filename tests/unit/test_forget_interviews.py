"""/forget touches no one else's interviews.

`Interview.started_by` is the id of the /interview message (a repeated delivery of it finds the
interview instead of starting another), not a user id: a message id equal to the forgetting
user's id must not lose its replay protection.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.services.forget import forget_user
from bot.storage.models import Interview, User

FORGETTING = 4_242
OTHER = 5_151


def interview(user_id: int, started_by: int) -> Interview:
    return Interview(
        user_id=user_id, chat_id=user_id, level="junior", question_ids=["q"], started_by=started_by
    )


async def test_forget_keeps_other_users_replay_protection(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions() as session, session.begin():
        session.add_all([User(id=FORGETTING), User(id=OTHER)])
        await session.flush()
        # The other person's /interview message happens to have the forgetting user's id.
        session.add_all([interview(FORGETTING, 17), interview(OTHER, FORGETTING)])

    await forget_user(sessions, FORGETTING)

    async with sessions() as session:
        left = (await session.scalars(select(Interview))).all()
    assert [(i.user_id, i.started_by) for i in left] == [(OTHER, FORGETTING)]
