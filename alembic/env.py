"""Async Alembic environment; batch mode so ALTERs work on SQLite."""

from __future__ import annotations

import asyncio
import os

from sqlalchemy import text
from sqlalchemy.engine import Connection

from alembic import context
from bot.storage.engine import create_engine
from bot.storage.models import Base

config = context.config
MIGRATION_LOCK = 0x6D6F636B  # any constant shared by every replica of this bot ("mock")
target_metadata = Base.metadata


def _url() -> str:
    return config.attributes.get("database_url") or os.environ.get(
        "DATABASE_URL", config.get_main_option("sqlalchemy.url") or ""
    )


def run_migrations_offline() -> None:
    context.configure(
        url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Replicas starting together: one migrates, the others wait here, then find the
            # schema current. Released when this transaction ends.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()


async def run_migrations_online() -> None:
    engine = create_engine(_url())
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_migrations_online())
