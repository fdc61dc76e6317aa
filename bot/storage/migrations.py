"""Apply Alembic migrations from code (on `run` start, in `practice`, and in tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic.config import Config

from alembic import command

ROOT = Path(__file__).resolve().parents[2]


def alembic_config(database_url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    config.attributes["database_url"] = database_url
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(database_url), revision)


async def upgrade_async(database_url: str) -> None:
    # env.py runs its own event loop, so it gets a thread of its own.
    await asyncio.to_thread(upgrade, database_url)
