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
