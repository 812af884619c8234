"""The adaptive tournament format (pairs the bots whose order is least certain).

Revision ID: 0008_adaptive_format
Revises: 0007_lesson_runs
Create Date: 2026-11-29 03:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_adaptive_format"
down_revision: str | None = "0007_lesson_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "format IN ('round_robin', 'swiss', 'gauntlet', 'ladder')"
_NEW = "format IN ('round_robin', 'swiss', 'gauntlet', 'ladder', 'adaptive')"


def upgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tournaments_format"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tournaments_format"), _NEW)


def downgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tournaments_format"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tournaments_format"), _OLD)
