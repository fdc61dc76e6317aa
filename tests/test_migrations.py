"""Stairway: upgrade head -> downgrade base -> upgrade head, and the migrations match the models."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from bot.storage.migrations import downgrade, upgrade
from bot.storage.models import Base


def _tables(path: Path) -> set[str]:
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        names = set(sa.inspect(conn).get_table_names())
    engine.dispose()
    return names - {"alembic_version"}


def test_upgrade_downgrade_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "stairway.db"
    url = f"sqlite+aiosqlite:///{path}"
    upgrade(url)
    assert _tables(path) == set(Base.metadata.tables)
    downgrade(url)
    assert _tables(path) == set()
    upgrade(url)
    assert _tables(path) == set(Base.metadata.tables)


def test_migrations_match_models(tmp_path: Path) -> None:
    """A model change without its Alembic revision fails here."""
    path = tmp_path / "diff.db"
    upgrade(f"sqlite+aiosqlite:///{path}")
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []


async def test_replicas_starting_together_migrate_once() -> None:
    """Three `python -m bot migrate` processes on one fresh PostgreSQL database at once (replicas
    started together): one migrates, the others wait for it, none fails. (Processes, not
    threads: Alembic's context is global to a process.)"""
    import asyncio
    import os
    import sys
    import uuid

    from tests.conftest import _pg_admin
    from tests.services import unavailable

    name = f"bot_race_{uuid.uuid4().hex[:10]}"
    try:
        await _pg_admin(f'CREATE DATABASE "{name}"')
    except Exception as exc:  # no server, no asyncpg, no rights: say why and skip (or fail)
        unavailable("PostgreSQL at 127.0.0.1:5432", exc)
    try:
        env = {**os.environ, "DATABASE_URL": f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"}
        runs = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "migrate",
                env=env,
                cwd=Path(__file__).parents[1],
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            for _ in range(3)
        ]
        outputs = await asyncio.gather(*(run.communicate() for run in runs))
        for run, (out, _) in zip(runs, outputs, strict=True):
            assert run.returncode == 0, out.decode()[-2000:]
    finally:
        await _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
