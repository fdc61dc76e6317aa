"""received_updates: failed_at, attempts, error (an update whose handler kept raising)

Revision ID: 008
Revises: 007
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "008"
down_revision: str | None = "007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("received_updates") as batch:
        batch.add_column(sa.Column("failed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("attempts", sa.Integer(), server_default="0", nullable=False))
        batch.add_column(sa.Column("error", sa.String(length=120), nullable=True))
    op.create_index(
        op.f("ix_received_updates_failed_at"), "received_updates", ["failed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_received_updates_failed_at"), table_name="received_updates")
    with op.batch_alter_table("received_updates") as batch:
        batch.drop_column("error")
        batch.drop_column("attempts")
        batch.drop_column("failed_at")
