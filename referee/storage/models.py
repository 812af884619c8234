"""The database schema as SQLAlchemy 2 typed declarative models.

These classes are the storage layer's private vocabulary: the rest of the referee goes through
:class:`referee.storage.Repository`, which returns plain dataclasses. Every schema change here
needs an Alembic revision in ``migrations/versions`` (a test compares the two).

Enumerated values (statuses, verdicts, source kinds; defined in :mod:`referee.storage.enums`)
are stored as short strings guarded by CHECK constraints rather than native enum types: adding
a verdict is then a one-line migration on both SQLite and PostgreSQL.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from engine.adjudication.verdicts import Verdict
from referee.storage.enums import (
    ForfeitPolicy,
    GameKind,
    MemoryMeasure,
    PairingStatus,
    PlayerKind,
    Role,
    SourceKind,
    SubmissionStatus,
    TournamentFormat,
    TournamentStatus,
)

# Deterministic constraint names: Alembic needs them to drop or alter constraints later, and
# SQLite batch migrations need them to recreate tables faithfully.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def _in(column: str, values: type[enum.StrEnum]) -> str:
    quoted = ", ".join(f"'{v.value}'" for v in values)
    return f"{column} IN ({quoted})"


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend.

    SQLite has no timezone support and hands back naive values; this stores UTC and always
    returns aware datetimes, so comparisons never mix naive and aware values.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware (UTC) datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads this class attribute
        datetime: UTCDateTime,
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


class Player(Base):
    """A person or a team that owns bots and authenticates with tokens."""

    __tablename__ = "players"
    __table_args__ = (CheckConstraint(_in("kind", PlayerKind), name="kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(16), default=PlayerKind.PLAYER.value)
    display_name: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: The team (a player of kind ``team``) this player belongs to, set by the roster.
    team_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", ondelete="SET NULL"), index=True
    )

    tokens: Mapped[list[Token]] = relationship(back_populates="player")


class Token(Base):
    """An API token: only its keyed hash is kept; ``key_id`` is the public half for look-up.
    ``role`` is what it may do; it stops working once revoked or past ``expires_at``."""

    __tablename__ = "tokens"
    __table_args__ = (CheckConstraint(_in("role", Role), name="role"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"), index=True)
    key_id: Mapped[str] = mapped_column(String(32), unique=True)
    algorithm: Mapped[str] = mapped_column(String(64))
    salt: Mapped[bytes] = mapped_column(LargeBinary(64))
    digest: Mapped[bytes] = mapped_column(LargeBinary(128))
    label: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    role: Mapped[str] = mapped_column(
        String(16), default=Role.STUDENT.value, server_default=Role.STUDENT.value
    )
    expires_at: Mapped[datetime | None]

    player: Mapped[Player] = relationship(back_populates="tokens")


class Bot(Base):
    __tablename__ = "bots"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    versions: Mapped[list[BotVersion]] = relationship(back_populates="bot")


class BotVersion(Base):
    """One playable version of a bot: games and ratings always refer to a version."""

    __tablename__ = "bot_versions"
    __table_args__ = (
        UniqueConstraint("bot_id", "version"),
        CheckConstraint(_in("source_kind", SourceKind), name="source_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"))
    version: Mapped[str] = mapped_column(String(100))
    source_kind: Mapped[str] = mapped_column(String(16))
    location: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    bot: Mapped[Bot] = relationship(back_populates="versions")


class Tournament(Base):
    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(_in("format", TournamentFormat), name="format"),
        CheckConstraint(_in("status", TournamentStatus), name="status"),
        CheckConstraint(_in("forfeit_policy", ForfeitPolicy), name="forfeit_policy"),
        CheckConstraint("games_per_pairing >= 1", name="games_per_pairing"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    format: Mapped[str] = mapped_column(String(16))
    game: Mapped[str] = mapped_column(String(64))
    game_params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: Seconds: ``per_game``, ``per_move``, ``increment``, ``grace`` (missing keys = defaults).
    time_control: Mapped[dict[str, Any]] = mapped_column(default=dict)
    memory_limit_mb: Mapped[int | None]
    cycles: Mapped[int | None]
    rounds: Mapped[int | None]
    games_per_pairing: Mapped[int] = mapped_column(default=2)
    forfeit_policy: Mapped[str] = mapped_column(String(8), default=ForfeitPolicy.LOSS.value)
    concurrency: Mapped[int | None]
    #: Format-specific extras (gauntlet's focus bot, Swiss seed, ...).
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default=TournamentStatus.CREATED.value)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    #: Submitted bots play their latest version accepted before this moment (None: at start).
    entries_close: Mapped[datetime | None]

    entries: Mapped[list[TournamentEntry]] = relationship(
        back_populates="tournament", order_by="TournamentEntry.seed"
    )


class TournamentEntry(Base):
    """A bot version taking part in a tournament, with its seed (pairing order)."""

    __tablename__ = "tournament_entries"
    __table_args__ = (
        UniqueConstraint("tournament_id", "bot_version_id"),
        UniqueConstraint("tournament_id", "seed"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), index=True)
    seed: Mapped[int]

    tournament: Mapped[Tournament] = relationship(back_populates="entries")


class Pairing(Base):
    """Two bot versions meeting in a round; plays ``games_planned`` games (sides swapped).

    ``bot_b_id`` is ``NULL`` for a bye.
    """

    __tablename__ = "pairings"
    __table_args__ = (
        UniqueConstraint("tournament_id", "round", "board"),
        CheckConstraint(_in("status", PairingStatus), name="status"),
        CheckConstraint("games_planned >= 0", name="games_planned"),
        Index(None, "tournament_id", "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    round: Mapped[int]
    board: Mapped[int]
    bot_a_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    bot_b_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    games_planned: Mapped[int]
    status: Mapped[str] = mapped_column(String(16), default=PairingStatus.PENDING.value)
    status_reason: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class GameRow(Base):
    """A finished (or aborted) game with its record, written in one transaction.

    ``slot`` equals ``game_index`` for a game that counts toward its pairing and is ``NULL``
    for an aborted one (to be replayed): the unique constraint on ``(pairing_id, slot)`` is
    what makes "no finished game is played again or counted twice" hold in the database,
    whatever the runner does. NULLs never collide, so aborted attempts can pile up.
    """

    __tablename__ = "games"
    __table_args__ = (
        UniqueConstraint("pairing_id", "slot"),
        CheckConstraint(_in("verdict", Verdict), name="verdict"),
        CheckConstraint("slot IS NULL OR slot = game_index", name="slot"),
        CheckConstraint(_in("kind", GameKind), name="kind"),
        Index(None, "tournament_id", "finished_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    uid: Mapped[str] = mapped_column(String(64), unique=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    pairing_id: Mapped[int | None] = mapped_column(
        ForeignKey("pairings.id", ondelete="CASCADE"), index=True
    )
    game_index: Mapped[int] = mapped_column(default=0)
    slot: Mapped[int | None]
    game: Mapped[str] = mapped_column(String(64))
    game_params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    verdict: Mapped[str] = mapped_column(String(16))
    #: The game's own termination (``engine.outcome.Termination``) when the rules ended it.
    termination: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text, default="")
    result: Mapped[str] = mapped_column(String(8))
    winner_seat: Mapped[int | None]
    #: The seat at fault for a fault verdict (time, memory, illegal move, crash...).
    offender_seat: Mapped[int | None]
    #: Left out of results and ratings (forfeit policy "void", or an aborted game).
    voided: Mapped[bool] = mapped_column(default=False)
    #: ``rated`` (tables, ladders, public pages) or ``validation`` (private, never rated).
    kind: Mapped[str] = mapped_column(
        String(16), default=GameKind.RATED.value, server_default=GameKind.RATED.value
    )
    plies: Mapped[int]
    #: Per ply: ``seat``, ``move``, ``measured_s``, ``reported_s``, ``memory_bytes``, ...
    moves: Mapped[list[Any]] = mapped_column(default=list)
    record_text: Mapped[str | None] = mapped_column(Text)
    record_json: Mapped[dict[str, Any] | None]
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime]

    seats: Mapped[list[GameSeat]] = relationship(
        back_populates="game_row", order_by="GameSeat.seat", cascade="all, delete-orphan"
    )


class GameSeat(Base):
    """Who sat where in a game, and what that seat used."""

    __tablename__ = "game_seats"
    __table_args__ = (
        UniqueConstraint("game_id", "seat"),
        CheckConstraint(_in("memory_measure", MemoryMeasure), name="memory_measure"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int]
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), index=True)
    score: Mapped[float] = mapped_column(Float)
    time_used_s: Mapped[float] = mapped_column(Float, default=0.0)
    reported_think_s: Mapped[float | None] = mapped_column(Float)
    peak_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    memory_measure: Mapped[str] = mapped_column(String(16), default=MemoryMeasure.UNKNOWN.value)
    stderr: Mapped[str | None] = mapped_column(Text)
    #: The seat's failure pack (JSON text) when its fault ended the game.
    failure_pack: Mapped[str | None] = mapped_column(Text, deferred=True)

    game_row: Mapped[GameRow] = relationship(back_populates="seats")


class RatingSnapshot(Base):
    """A rating table at one moment, for a tournament or for a named ladder."""

    __tablename__ = "rating_snapshots"
    __table_args__ = (
        CheckConstraint("(tournament_id IS NULL) <> (ladder IS NULL)", name="scope"),
        Index(None, "tournament_id", "method", "taken_at"),
        Index(None, "ladder", "method", "taken_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    ladder: Mapped[str | None] = mapped_column(String(100))
    #: e.g. ``ml_elo``, ``k_elo``, ``openskill``.
    method: Mapped[str] = mapped_column(String(32))
    #: How the scale is fixed, e.g. "mean 1500" or "random_bot = 1000".
    anchor: Mapped[str | None] = mapped_column(Text)
    games_counted: Mapped[int] = mapped_column(default=0)
    taken_at: Mapped[datetime] = mapped_column(default=utcnow)

    entries: Mapped[list[RatingEntry]] = relationship(
        back_populates="snapshot", cascade="all, delete-orphan", order_by="RatingEntry.rank"
    )


class RatingEntry(Base):
    __tablename__ = "rating_entries"
    __table_args__ = (UniqueConstraint("snapshot_id", "bot_version_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("rating_snapshots.id", ondelete="CASCADE"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), index=True)
    rank: Mapped[int]
    rating: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    mu: Mapped[float | None] = mapped_column(Float)
    sigma: Mapped[float | None] = mapped_column(Float)
    games: Mapped[int] = mapped_column(default=0)
    provisional: Mapped[bool] = mapped_column(default=False)

    snapshot: Mapped[RatingSnapshot] = relationship(back_populates="entries")


class Submission(Base):
    """An uploaded bot version: who sent it, what it holds and how its validation went.

    The code itself lives in the submission store (``location`` of its bot version), named by
    its content hash, never by anything the uploader chose.
    """

    __tablename__ = "submissions"
    __table_args__ = (
        CheckConstraint(_in("status", SubmissionStatus), name="status"),
        Index(None, "owner_id", "uploaded_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_version_id: Mapped[int] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="CASCADE"), unique=True
    )
    owner_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    #: sha256 of the unpacked tree (``content_hash`` without its prefix).
    digest: Mapped[str] = mapped_column(String(64), index=True)
    archive_bytes: Mapped[int] = mapped_column(BigInteger)
    unpacked_bytes: Mapped[int] = mapped_column(BigInteger)
    files: Mapped[int]
    uploaded_at: Mapped[datetime] = mapped_column(default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default=SubmissionStatus.VALIDATING.value)
    #: The verdict's sentence (why it was rejected, or how the validation game ended).
    reason: Mapped[str] = mapped_column(Text, default="")
    #: The bot's own captured output from its validation game (bounded).
    output: Mapped[str] = mapped_column(Text, default="")
    validation_game_uid: Mapped[str | None] = mapped_column(String(64))
    #: How the validation game confined and measured the bot (e.g. ``bwrap+cgroup_v2``).
    sandbox: Mapped[str] = mapped_column(String(200), default="")
    validated_at: Mapped[datetime | None]


class InstructorReport(Base):
    """A report for the instructor's eyes only (``grades``, ``similarity``), as made by its
    command; the instructor's web pages show the newest of each kind."""

    __tablename__ = "instructor_reports"
    __table_args__ = (
        CheckConstraint("kind IN ('grades', 'similarity')", name="kind"),
        Index(None, "kind", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: The command's settings and everything the page shows.
    body: Mapped[dict[str, Any]] = mapped_column(default=dict)


class LessonRun(Base):
    """One lesson position put to a later version of the same bot: which version (``version``)
    tried the position a version (``lessons_of``) lost, and what its move was judged."""

    __tablename__ = "lesson_runs"
    __table_args__ = (
        UniqueConstraint("version_id", "lessons_of_id", "game_uid", "ply", "seat"),
        Index(None, "version_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id", ondelete="CASCADE"))
    lessons_of_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id", ondelete="CASCADE"))
    game_uid: Mapped[str] = mapped_column(String(64))
    ply: Mapped[int]
    seat: Mapped[int]
    #: ``client_sdk.testing.Tried.result``: solved, missed, repeated, illegal, time, ...
    result: Mapped[str] = mapped_column(String(16))
    move: Mapped[str | None] = mapped_column(String(64))
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
