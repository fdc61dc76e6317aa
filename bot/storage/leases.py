"""Leases in the database: something only one replica does at a time (handle a group's round,
be alive). A lease is taken when free, lapsed or already held by the caller, in one conditional
UPDATE (or an INSERT that the primary key lets only one racer win), so two replicas never both
hold it; a replica that dies simply stops renewing, and the lease lapses."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cache

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.storage.models import Lease
from bot.storage.results import rowcount


@cache
def _this_process() -> str:
    return f"{socket.gethostname()[:30]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def new_holder() -> str:
    """A lease holder's name: this process's (new at every start, unique across hosts) and
    one object's in it (tests run two replicas in one process)."""
    return f"{_this_process()}-{uuid.uuid4().hex[:6]}"


async def take_lease(
    sessions: async_sessionmaker[AsyncSession],
    name: str,
    holder: str,
    ttl: timedelta,
    now: datetime,
) -> bool:
    """Take or renew `name` for `holder` until now + ttl; False if another holds it."""
    try:
        async with sessions() as session, session.begin():
            taken = await session.execute(
                update(Lease)
                .where(Lease.name == name, or_(Lease.holder == holder, Lease.expires_at < now))
                .values(holder=holder, expires_at=now + ttl)
            )
            if rowcount(taken):
                return True
            if await session.get(Lease, name) is not None:
                return False
            session.add(Lease(name=name, holder=holder, expires_at=now + ttl))
        return True
    except IntegrityError:  # another replica inserted it first
        return False


async def release_lease(sessions: async_sessionmaker[AsyncSession], name: str, holder: str) -> None:
    async with sessions() as session, session.begin():
        await session.execute(delete(Lease).where(Lease.name == name, Lease.holder == holder))


async def live_holders(
    sessions: async_sessionmaker[AsyncSession], names: Sequence[str], now: datetime
) -> set[str]:
    """Which of the named leases are held now (not lapsed)."""
    if not names:
        return set()
    async with sessions() as session:
        rows = await session.scalars(
            select(Lease.name).where(Lease.name.in_(names), Lease.expires_at >= now)
        )
        return set(rows.all())


class Leases:
    """The lease table of one database, for an object that holds leases but nothing else of
    the database (delivery's `outbox:<user>` leases): it gets this, built once, instead of
    borrowing some service's session factory."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]):
        self._sessions = sessions

    async def take(self, name: str, holder: str, ttl: timedelta, now: datetime) -> bool:
        """Take or renew `name` for `holder` until now + ttl; False if another holds it."""
        return await take_lease(self._sessions, name, holder, ttl, now)

    async def release(self, name: str, holder: str) -> None:
        await release_lease(self._sessions, name, holder)
