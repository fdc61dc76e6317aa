"""daily questions

Revision ID: 002
Revises: 001
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "002"
down_revision: str | None = "001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "daily_subscriptions",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("local_time", sa.String(length=5), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("level", sa.String(length=10), nullable=True),
        sa.Column("weekdays_only", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("next_due_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stopped_reason", sa.String(length=200), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_daily_subscriptions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_daily_subscriptions")),
    )
    with op.batch_alter_table("daily_subscriptions", schema=None) as batch_op:
        batch_op.create_index("ix_daily_subscriptions_due", ["active", "next_due_at"], unique=False)

    op.create_table(
        "daily_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("local_date", sa.String(length=10), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("claim_token", sa.String(length=32), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("question_id", sa.String(length=80), nullable=True),
        sa.Column("ask_id", sa.Integer(), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["ask_id"],
            ["asked_questions.id"],
            name=op.f("fk_daily_deliveries_ask_id_asked_questions"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_daily_deliveries_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_daily_deliveries")),
        sa.UniqueConstraint("user_id", "local_date", name=op.f("uq_daily_deliveries_user_id")),
    )
    with op.batch_alter_table("daily_deliveries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_daily_deliveries_ask_id"), ["ask_id"], unique=False)
        batch_op.create_index("ix_daily_deliveries_claim_token", ["claim_token"], unique=False)
        batch_op.create_index(
            "ix_daily_deliveries_status_due", ["status", "due_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("daily_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_daily_deliveries_status_due")
        batch_op.drop_index("ix_daily_deliveries_claim_token")
        batch_op.drop_index(batch_op.f("ix_daily_deliveries_ask_id"))
    op.drop_table("daily_deliveries")
    with op.batch_alter_table("daily_subscriptions", schema=None) as batch_op:
        batch_op.drop_index("ix_daily_subscriptions_due")
    op.drop_table("daily_subscriptions")
