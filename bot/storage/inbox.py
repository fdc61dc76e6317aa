"""The inbox of received updates: stored first, handled later, replayed after a crash.

Telegram forgets an update once the next getUpdates carries a higher offset. The poller stores
each batch here (one commit) before it asks again, and marks an update handled once its handler
has finished; whatever is stored but not handled when the process dies is handled on restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import utcnow
from bot.storage.models import ReceivedUpdate

# Telegram keeps an unconfirmed update for 24 hours; a handled one is kept as long, so a
# redelivered copy is recognised instead of handled twice.
KEEP_HANDLED = timedelta(hours=24)


class UpdateInbox:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]):
        self.sessions = sessions

    async def store(self, updates: Sequence[tuple[int, str]]) -> set[int]:
        """Store (update_id, payload JSON) pairs in one transaction; return the ids new here
        (a redelivered update that is already stored is not returned, so it is not handled
        twice)."""
        if not updates:
            return set()
        ids = [update_id for update_id, _ in updates]
        async with self.sessions() as session, session.begin():
            known = set(
                (
                    await session.scalars(
                        select(ReceivedUpdate.update_id).where(ReceivedUpdate.update_id.in_(ids))
                    )
                ).all()
            )
            fresh = {update_id: payload for update_id, payload in updates if update_id not in known}
            now = utcnow()
            session.add_all(
                ReceivedUpdate(update_id=update_id, payload=payload, received_at=now)
                for update_id, payload in fresh.items()
            )
        return set(fresh)

    async def unhandled(self) -> list[tuple[int, str]]:
        """What a previous process stored but did not finish, oldest first."""
        async with self.sessions() as session:
            rows = await session.execute(
                select(ReceivedUpdate.update_id, ReceivedUpdate.payload)
                .where(ReceivedUpdate.handled_at.is_(None))
                .order_by(ReceivedUpdate.update_id)
            )
            return [(update_id, payload) for update_id, payload in rows]

    async def mark_handled(self, update_id: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(
                update(ReceivedUpdate)
                .where(ReceivedUpdate.update_id == update_id)
                .values(handled_at=utcnow())
            )

    async def prune(self) -> int:
        """Forget handled updates older than Telegram could redeliver them."""
        async with self.sessions() as session, session.begin():
            result = await session.execute(
                delete(ReceivedUpdate).where(ReceivedUpdate.handled_at < utcnow() - KEEP_HANDLED)
            )
            return int(getattr(result, "rowcount", 0) or 0)
