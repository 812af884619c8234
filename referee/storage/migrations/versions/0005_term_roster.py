"""A player's team (the roster puts each student in a team, itself a player of kind team),
and the instructor's reports (grades, similarity) the instructor's pages show.

Revision ID: 0005_term_roster
Revises: 0004
Create Date: 2026-11-26 14:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_term_roster"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(sa.Column("team_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_players_team_id"), ["team_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_players_team_id_players"),
            "players",
            ["team_id"],
            ["id"],
            ondelete="SET NULL",
        )

    op.create_table(
        "instructor_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.CheckConstraint(
            "kind IN ('grades', 'similarity')", name=op.f("ck_instructor_reports_kind")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instructor_reports")),
    )
    op.create_index(
        op.f("ix_instructor_reports_kind_created_at"),
        "instructor_reports",
        ["kind", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_instructor_reports_kind_created_at"), table_name="instructor_reports")
    op.drop_table("instructor_reports")
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_players_team_id_players"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_players_team_id"))
        batch_op.drop_column("team_id")
