"""received updates, stored before Telegram is told they arrived; interviews.started_by; asked_questions.send_attempts

Revision ID: 005
Revises: 004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "005"
down_revision: str | None = "004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "received_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_received_updates")),
    )
    op.create_index(
        op.f("ix_received_updates_handled_at"), "received_updates", ["handled_at"], unique=False
    )
    with op.batch_alter_table("interviews") as batch:
        batch.add_column(sa.Column("started_by", sa.BigInteger(), nullable=True))
    with op.batch_alter_table("asked_questions") as batch:
        batch.add_column(
            sa.Column("send_attempts", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("asked_questions") as batch:
        batch.drop_column("send_attempts")
    with op.batch_alter_table("interviews") as batch:
        batch.drop_column("started_by")
    op.drop_index(op.f("ix_received_updates_handled_at"), table_name="received_updates")
    op.drop_table("received_updates")
