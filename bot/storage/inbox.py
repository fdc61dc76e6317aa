"""The inbox of received updates: stored first, handled later, replayed after a crash.

Telegram forgets an update once the next getUpdates carries a higher offset (or a webhook post
has its 2xx). The receiver stores each batch here (one commit) before that, claimed by its
replica, and marks an update handled once its handler has finished; whatever is stored but not
handled when a replica dies is taken over by a live one (or by itself after a restart).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import utcnow
from bot.storage.models import Lease, ReceivedUpdate
from bot.storage.results import rowcount

# Telegram keeps an unconfirmed update for 24 hours; a handled one is kept as long, so a
# redelivered copy is recognised instead of handled twice.
KEEP_HANDLED = timedelta(hours=24)
REPLICA = "replica:"  # the prefix of a live replica's lease (bot/storage/leases.py)


class UpdateInbox:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]):
        self.sessions = sessions

    async def store(
        self, updates: Sequence[tuple[int, str]], claimed_by: str | None = None
    ) -> set[int]:
        """Store (update_id, payload JSON) pairs in one transaction, claimed by the replica
        that will handle them; return the ids new here (a redelivered update that is already
        stored is not returned, so it is not handled twice)."""
        if not updates:
            return set()
        now = utcnow()
        rows = [
            {"update_id": i, "payload": p, "received_at": now, "claimed_by": claimed_by}
            for i, p in dict(updates).items()
        ]
        async with self.sessions() as session, session.begin():
            # One statement that skips what is stored already: two replicas storing the same
            # redelivered update at once both succeed, and only one gets it back as new
            # (select-then-insert raced into a unique violation and a 503).
            dialect = session.get_bind().dialect.name
            insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
            stmt = (
                insert(ReceivedUpdate)
                .values(rows)
                .on_conflict_do_nothing(index_elements=[ReceivedUpdate.update_id])
                .returning(ReceivedUpdate.update_id)
            )
            return set((await session.scalars(stmt)).all())

    async def claim_orphans(self, holder: str, now: datetime) -> list[tuple[int, str]]:
        """Unhandled updates that no live replica is handling (unclaimed, or claimed by one
        whose `replica:<id>` lease has lapsed: it died or stopped), claimed for `holder`, oldest
        first. Each claim is a conditional UPDATE, so two replicas never take the same one."""
        async with self.sessions() as session, session.begin():
            rows = (
                await session.execute(
                    select(
                        ReceivedUpdate.update_id,
                        ReceivedUpdate.payload,
                        ReceivedUpdate.claimed_by,
                    )
                    .where(
                        ReceivedUpdate.handled_at.is_(None),
                        or_(
                            ReceivedUpdate.claimed_by.is_(None),
                            ReceivedUpdate.claimed_by != holder,
                        ),
                    )
                    .order_by(ReceivedUpdate.update_id)
                )
            ).all()
            claimers = {f"{REPLICA}{c}" for _, _, c in rows if c is not None}
            live = set(
                (
                    await session.scalars(
                        select(Lease.name).where(Lease.name.in_(claimers), Lease.expires_at >= now)
                    )
                ).all()
            )
            taken = []
            for update_id, payload, claimer in rows:
                if claimer is not None and f"{REPLICA}{claimer}" in live:
                    continue
                won = await session.execute(
                    update(ReceivedUpdate)
                    .where(
                        ReceivedUpdate.update_id == update_id,
                        ReceivedUpdate.handled_at.is_(None),
                        (
                            ReceivedUpdate.claimed_by.is_(None)
                            if claimer is None
                            else ReceivedUpdate.claimed_by == claimer
                        ),
                    )
                    .values(claimed_by=holder)
                )
                if rowcount(won):
                    taken.append((update_id, payload))
            return taken

    async def held_elsewhere(self, holder: str) -> int:
        """How many unhandled updates are claimed by replicas other than `holder`."""
        async with self.sessions() as session:
            count = await session.scalar(
                select(func.count())
                .select_from(ReceivedUpdate)
                .where(
                    ReceivedUpdate.handled_at.is_(None),
                    ReceivedUpdate.claimed_by.is_not(None),
                    ReceivedUpdate.claimed_by != holder,
                )
            )
            return int(count or 0)

    async def mark_handled(self, update_id: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(
                update(ReceivedUpdate)
                .where(ReceivedUpdate.update_id == update_id)
                .values(handled_at=utcnow())
            )

    async def mark_failed(self, update_id: int, attempts: int, error: str) -> None:
        """Done, but its handler raised on every try: kept apart from the handled ones so that
        /stats and /metrics can count it (and a redelivered copy is not tried again)."""
        now = utcnow()
        async with self.sessions() as session, session.begin():
            await session.execute(
                update(ReceivedUpdate)
                .where(ReceivedUpdate.update_id == update_id)
                .values(handled_at=now, failed_at=now, attempts=attempts, error=error[:120])
            )

    async def prune(self) -> int:
        """Forget handled updates older than Telegram could redeliver them."""
        async with self.sessions() as session, session.begin():
            result = await session.execute(
                delete(ReceivedUpdate).where(ReceivedUpdate.handled_at < utcnow() - KEEP_HANDLED)
            )
            return rowcount(result)
