"""leases (one replica at a time); received_updates.claimed_by (which replica handles it)

Revision ID: 007
Revises: 006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "007"
down_revision: str | None = "006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    with op.batch_alter_table("received_updates") as batch:
        batch.add_column(sa.Column("claimed_by", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("received_updates") as batch:
        batch.drop_column("claimed_by")
    op.drop_table("leases")
