"""A game's kind: rated games, or private validation games of uploaded versions.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 02:05:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), server_default="rated", nullable=False)
        )
        batch_op.create_check_constraint(op.f("ck_games_kind"), "kind IN ('rated', 'validation')")


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_games_kind"), type_="check")
        batch_op.drop_column("kind")
