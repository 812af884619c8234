"""Lesson runs: each later version's move on the positions an earlier version lost.

Revision ID: 0007_lesson_runs
Revises: 0006_packs
Create Date: 2026-11-29 05:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_lesson_runs"
down_revision: str | None = "0006_packs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lesson_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("lessons_of_id", sa.Integer(), nullable=False),
        sa.Column("game_uid", sa.String(length=64), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("result", sa.String(length=16), nullable=False),
        sa.Column("move", sa.String(length=64), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["bot_versions.id"],
            name=op.f("fk_lesson_runs_version_id_bot_versions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["lessons_of_id"],
            ["bot_versions.id"],
            name=op.f("fk_lesson_runs_lessons_of_id_bot_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lesson_runs")),
        sa.UniqueConstraint(
            "version_id",
            "lessons_of_id",
            "game_uid",
            "ply",
            "seat",
            name=op.f("uq_lesson_runs_version_id_lessons_of_id_game_uid_ply_seat"),
        ),
    )
    with op.batch_alter_table("lesson_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lesson_runs_version_id"), ["version_id"])


def downgrade() -> None:
    with op.batch_alter_table("lesson_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lesson_runs_version_id"))
    op.drop_table("lesson_runs")
