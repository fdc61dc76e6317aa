"""review cards: the FSRS state of each question for each person (spaced repetition)

Revision ID: 006
Revises: 005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "006"
down_revision: str | None = "005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "review_cards",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("question_id", sa.String(length=80), nullable=False),
        sa.Column("state", sa.Integer(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("stability", sa.Float(), nullable=True),
        sa.Column("difficulty", sa.Float(), nullable=True),
        sa.Column("due", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_review", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reviews", sa.Integer(), nullable=False),
        sa.Column("lapses", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "question_id", name=op.f("pk_review_cards")),
    )
    op.create_index("ix_review_cards_user_due", "review_cards", ["user_id", "due"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_review_cards_user_due", table_name="review_cards")
    op.drop_table("review_cards")
