"""Stairway: upgrade head -> downgrade base -> upgrade head on a fresh SQLite file."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from bot.storage.migrations import downgrade, upgrade


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
    assert _tables(path) == {"users", "interviews", "asked_questions", "answers"}
    downgrade(url)
    assert _tables(path) == set()
    upgrade(url)
    assert _tables(path) == {"users", "interviews", "asked_questions", "answers"}
