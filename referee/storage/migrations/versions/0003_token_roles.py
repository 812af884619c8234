"""Tokens carry a role (student, instructor, admin) and may expire.

Tokens issued before this revision become students' tokens with no expiry.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 02:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("role", sa.String(length=16), server_default="student", nullable=False)
        )
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_check_constraint(
            op.f("ck_tokens_role"), "role IN ('student', 'instructor', 'admin')"
        )


def downgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tokens_role"), type_="check")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("role")
