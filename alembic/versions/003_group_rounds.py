"""group rounds

Revision ID: 003
Revises: 002
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "003"
down_revision: str | None = "002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
