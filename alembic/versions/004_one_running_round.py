"""one running round per group, as a partial unique index

Revision ID: 004
Revises: 003
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "004"
down_revision: str | None = "003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNNING = sa.text("status IN ('active', 'finishing')")


def upgrade() -> None:
    op.create_index(
        "uq_rounds_one_running_per_chat",
        "rounds",
        ["chat_id"],
        unique=True,
        sqlite_where=RUNNING,
        postgresql_where=RUNNING,
    )


def downgrade() -> None:
    op.drop_index("uq_rounds_one_running_per_chat", table_name="rounds")
