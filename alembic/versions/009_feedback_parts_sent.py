"""answers.parts_sent: how many parts of a feedback have gone out (a flush taken over after a
kill resumes after them instead of sending them again)

Revision ID: 009
Revises: 008
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "009"
down_revision: str | None = "008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.add_column(sa.Column("parts_sent", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.drop_column("parts_sent")
