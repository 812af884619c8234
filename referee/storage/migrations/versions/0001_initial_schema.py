"""Initial schema: players, tokens, bots, tournaments, pairings, games, ratings.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-21 20:47:20.427113
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('player', 'team')", name=op.f("ck_players_kind")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("name", name=op.f("uq_players_name")),
    )
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("game", sa.String(length=64), nullable=False),
        sa.Column("game_params", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("memory_limit_mb", sa.Integer(), nullable=True),
        sa.Column("cycles", sa.Integer(), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("games_per_pairing", sa.Integer(), nullable=False),
        sa.Column("forfeit_policy", sa.String(length=8), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=True),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "forfeit_policy IN ('loss', 'void')", name=op.f("ck_tournaments_forfeit_policy")
        ),
        sa.CheckConstraint(
            "format IN ('round_robin', 'swiss', 'gauntlet', 'ladder')",
            name=op.f("ck_tournaments_format"),
        ),
        sa.CheckConstraint(
            "status IN ('created', 'running', 'paused', 'finished', 'cancelled')",
            name=op.f("ck_tournaments_status"),
        ),
        sa.CheckConstraint("games_per_pairing >= 1", name=op.f("ck_tournaments_games_per_pairing")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("name", name=op.f("uq_tournaments_name")),
    )
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["players.id"], name=op.f("fk_bots_owner_id_players"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bots")),
        sa.UniqueConstraint("name", name=op.f("uq_bots_name")),
    )
    op.create_index(op.f("ix_bots_owner_id"), "bots", ["owner_id"], unique=False)

    op.create_table(
        "rating_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("ladder", sa.String(length=100), nullable=True),
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.Column("anchor", sa.Text(), nullable=True),
        sa.Column("games_counted", sa.Integer(), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "(tournament_id IS NULL) <> (ladder IS NULL)", name=op.f("ck_rating_snapshots_scope")
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_rating_snapshots_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_snapshots")),
    )
    op.create_index(
        op.f("ix_rating_snapshots_ladder_method_taken_at"),
        "rating_snapshots",
        ["ladder", "method", "taken_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_rating_snapshots_tournament_id_method_taken_at"),
        "rating_snapshots",
        ["tournament_id", "method", "taken_at"],
        unique=False,
    )

    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("algorithm", sa.String(length=64), nullable=False),
        sa.Column("salt", sa.LargeBinary(length=64), nullable=False),
        sa.Column("digest", sa.LargeBinary(length=128), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_tokens_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
        sa.UniqueConstraint("key_id", name=op.f("uq_tokens_key_id")),
    )
    op.create_index(op.f("ix_tokens_player_id"), "tokens", ["player_id"], unique=False)

    op.create_table(
        "bot_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("source_kind", sa.String(length=16), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "source_kind IN ('package', 'sdk_module', 'command', 'remote')",
            name=op.f("ck_bot_versions_source_kind"),
        ),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_bot_versions_bot_id_bots"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bot_versions")),
        sa.UniqueConstraint("bot_id", "version", name=op.f("uq_bot_versions_bot_id_version")),
    )
    op.create_table(
        "pairings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("bot_a_id", sa.Integer(), nullable=False),
        sa.Column("bot_b_id", sa.Integer(), nullable=True),
        sa.Column("games_planned", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'finished', 'void')", name=op.f("ck_pairings_status")
        ),
        sa.CheckConstraint("games_planned >= 0", name=op.f("ck_pairings_games_planned")),
        sa.ForeignKeyConstraint(
            ["bot_a_id"], ["bot_versions.id"], name=op.f("fk_pairings_bot_a_id_bot_versions")
        ),
        sa.ForeignKeyConstraint(
            ["bot_b_id"], ["bot_versions.id"], name=op.f("fk_pairings_bot_b_id_bot_versions")
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_pairings_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairings")),
        sa.UniqueConstraint(
            "tournament_id", "round", "board", name=op.f("uq_pairings_tournament_id_round_board")
        ),
    )
    op.create_index(
        op.f("ix_pairings_tournament_id_status"),
        "pairings",
        ["tournament_id", "status"],
        unique=False,
    )

    op.create_table(
        "rating_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("mu", sa.Float(), nullable=True),
        sa.Column("sigma", sa.Float(), nullable=True),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_rating_entries_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["rating_snapshots.id"],
            name=op.f("fk_rating_entries_snapshot_id_rating_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_entries")),
        sa.UniqueConstraint(
            "snapshot_id",
            "bot_version_id",
            name=op.f("uq_rating_entries_snapshot_id_bot_version_id"),
        ),
    )
    op.create_index(
        op.f("ix_rating_entries_bot_version_id"), "rating_entries", ["bot_version_id"], unique=False
    )

    op.create_table(
        "tournament_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_tournament_entries_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_entries_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_entries")),
        sa.UniqueConstraint(
            "tournament_id",
            "bot_version_id",
            name=op.f("uq_tournament_entries_tournament_id_bot_version_id"),
        ),
        sa.UniqueConstraint(
            "tournament_id", "seed", name=op.f("uq_tournament_entries_tournament_id_seed")
        ),
    )
    op.create_index(
        op.f("ix_tournament_entries_bot_version_id"),
        "tournament_entries",
        ["bot_version_id"],
        unique=False,
    )

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(length=64), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("pairing_id", sa.Integer(), nullable=True),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=True),
        sa.Column("game", sa.String(length=64), nullable=False),
        sa.Column("game_params", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("termination", sa.String(length=32), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("result", sa.String(length=8), nullable=False),
        sa.Column("winner_seat", sa.Integer(), nullable=True),
        sa.Column("offender_seat", sa.Integer(), nullable=True),
        sa.Column("voided", sa.Boolean(), nullable=False),
        sa.Column("plies", sa.Integer(), nullable=False),
        sa.Column("moves", sa.JSON(), nullable=False),
        sa.Column("record_text", sa.Text(), nullable=True),
        sa.Column("record_json", sa.JSON(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "verdict IN ('normal', 'turn_limit', 'time', 'memory', 'illegal_move', 'runtime_error',"
            " 'protocol_error', 'disconnect', 'aborted')",
            name=op.f("ck_games_verdict"),
        ),
        sa.CheckConstraint("slot IS NULL OR slot = game_index", name=op.f("ck_games_slot")),
        sa.ForeignKeyConstraint(
            ["pairing_id"],
            ["pairings.id"],
            name=op.f("fk_games_pairing_id_pairings"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_games_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
        sa.UniqueConstraint("pairing_id", "slot", name=op.f("uq_games_pairing_id_slot")),
        sa.UniqueConstraint("uid", name=op.f("uq_games_uid")),
    )
    op.create_index(op.f("ix_games_pairing_id"), "games", ["pairing_id"], unique=False)
    op.create_index(
        op.f("ix_games_tournament_id_finished_at"),
        "games",
        ["tournament_id", "finished_at"],
        unique=False,
    )

    op.create_table(
        "game_seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("time_used_s", sa.Float(), nullable=False),
        sa.Column("reported_think_s", sa.Float(), nullable=True),
        sa.Column("peak_memory_bytes", sa.BigInteger(), nullable=True),
        sa.Column("memory_measure", sa.String(length=16), nullable=False),
        sa.Column("stderr", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "memory_measure IN ('rss_poll', 'cgroup', 'rlimit', 'self_reported', 'unknown')",
            name=op.f("ck_game_seats_memory_measure"),
        ),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_game_seats_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_game_seats_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game_seats")),
        sa.UniqueConstraint("game_id", "seat", name=op.f("uq_game_seats_game_id_seat")),
    )
    op.create_index(
        op.f("ix_game_seats_bot_version_id"), "game_seats", ["bot_version_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_game_seats_bot_version_id"), table_name="game_seats")

    op.drop_table("game_seats")
    op.drop_index(op.f("ix_games_tournament_id_finished_at"), table_name="games")
    op.drop_index(op.f("ix_games_pairing_id"), table_name="games")

    op.drop_table("games")
    op.drop_index(op.f("ix_tournament_entries_bot_version_id"), table_name="tournament_entries")

    op.drop_table("tournament_entries")
    op.drop_index(op.f("ix_rating_entries_bot_version_id"), table_name="rating_entries")

    op.drop_table("rating_entries")
    op.drop_index(op.f("ix_pairings_tournament_id_status"), table_name="pairings")

    op.drop_table("pairings")
    op.drop_table("bot_versions")
    op.drop_index(op.f("ix_tokens_player_id"), table_name="tokens")

    op.drop_table("tokens")
    op.drop_index(
        op.f("ix_rating_snapshots_tournament_id_method_taken_at"), table_name="rating_snapshots"
    )
    op.drop_index(op.f("ix_rating_snapshots_ladder_method_taken_at"), table_name="rating_snapshots")

    op.drop_table("rating_snapshots")
    op.drop_index(op.f("ix_bots_owner_id"), table_name="bots")

    op.drop_table("bots")
    op.drop_table("tournaments")
    op.drop_table("players")
