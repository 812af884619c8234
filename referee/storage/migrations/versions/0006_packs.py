"""Failure packs: a faulted seat's pack (JSON text) beside its captured output.

Revision ID: 0006_packs
Revises: 0005_term_roster
Create Date: 2026-11-26 15:12:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_packs"
down_revision: str | None = "0005_term_roster"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("game_seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("failure_pack", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game_seats", schema=None) as batch_op:
        batch_op.drop_column("failure_pack")
