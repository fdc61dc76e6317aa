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

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.storage.erasure import ErasureRepo


async def forget_user(
    sessions: async_sessionmaker[AsyncSession], user_id: int, current_update: int | None = None
) -> None:
    """`current_update`: the update being handled (the confirmation); it is redacted too.
    Other updates not yet handled are left to be handled: they came after the decision."""
    async with sessions() as session, session.begin():
        rows = ErasureRepo(session)
        names = await rows.names(user_id)  # read before the rows that hold them go
        await rows.delete_user(user_id)
        # The id's digits (or a name) somewhere in the text narrow the scan; the JSON decides.
        for update_id, payload in await rows.updates_containing(user_id, names, current_update):
            data = json.loads(payload)
            if _mentions(data, user_id) or any(_bot_wrote(data, name) for name in names):
                await rows.redact(update_id)


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
