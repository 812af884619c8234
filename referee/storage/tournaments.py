"""Tournaments: their settings, status and entrants."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from referee.storage.base import AreaRepository
from referee.storage.bots import BotVersionInfo, version_info
from referee.storage.enums import ForfeitPolicy, TournamentFormat, TournamentStatus
from referee.storage.errors import ConflictError, NotFoundError
from referee.storage.models import Bot, BotVersion, Tournament, TournamentEntry, utcnow


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    """What a tournament is created with."""

    name: str
    format: TournamentFormat
    game: str
    game_params: Mapping[str, Any] = field(default_factory=dict)
    #: Seconds: ``per_game``, ``per_move``, ``increment``, ``grace``.
    time_control: Mapping[str, float] = field(default_factory=dict)
    memory_limit_mb: int | None = None
    cycles: int | None = None
    rounds: int | None = None
    games_per_pairing: int = 2
    forfeit_policy: ForfeitPolicy = ForfeitPolicy.LOSS
    concurrency: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TournamentInfo:
    id: int
    settings: TournamentSettings
    status: TournamentStatus
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @property
    def name(self) -> str:
        return self.settings.name


class TournamentRepository(AreaRepository):
    """Tournaments and their entrants (their pairings and games have their own areas)."""

    def create_tournament(
        self, settings: TournamentSettings, entrants: Sequence[int]
    ) -> TournamentInfo:
        """A new tournament with its entrants (bot version ids, in seed order)."""
        if len(set(entrants)) != len(entrants):
            raise ConflictError("a bot version is entered twice")
        try:
            with self.db.write() as s:
                row = Tournament(
                    name=settings.name,
                    format=TournamentFormat(settings.format).value,
                    game=settings.game,
                    game_params=dict(settings.game_params),
                    time_control=dict(settings.time_control),
                    memory_limit_mb=settings.memory_limit_mb,
                    cycles=settings.cycles,
                    rounds=settings.rounds,
                    games_per_pairing=settings.games_per_pairing,
                    forfeit_policy=ForfeitPolicy(settings.forfeit_policy).value,
                    concurrency=settings.concurrency,
                    options=dict(settings.options),
                    status=TournamentStatus.CREATED.value,
                )
                s.add(row)
                s.flush()
                for seed, version_id in enumerate(entrants):
                    if s.get(BotVersion, version_id) is None:
                        raise NotFoundError(f"no bot version {version_id}")
                    s.add(
                        TournamentEntry(tournament_id=row.id, bot_version_id=version_id, seed=seed)
                    )
                s.flush()
                return tournament_info(row)
        except IntegrityError as exc:
            raise ConflictError(f"a tournament named {settings.name!r} already exists") from exc

    def get_tournament(self, name_or_id: str | int) -> TournamentInfo:
        with self.db.read() as s:
            return tournament_info(find_tournament(s, name_or_id))

    def list_tournaments(self) -> list[TournamentInfo]:
        with self.db.read() as s:
            rows = s.scalars(select(Tournament).order_by(Tournament.id))
            return [tournament_info(r) for r in rows]

    def tournament_entrants(self, tournament_id: int) -> list[BotVersionInfo]:
        """The entrants in seed order."""
        with self.db.read() as s:
            rows = s.execute(
                select(BotVersion, Bot)
                .join(TournamentEntry, TournamentEntry.bot_version_id == BotVersion.id)
                .join(Bot, Bot.id == BotVersion.bot_id)
                .where(TournamentEntry.tournament_id == tournament_id)
                .order_by(TournamentEntry.seed)
            )
            return [version_info(v, b) for v, b in rows]

    def set_tournament_status(self, tournament_id: int, status: TournamentStatus) -> TournamentInfo:
        """Change the status; the first ``running`` sets ``started_at``, ``finished`` and
        ``cancelled`` set ``finished_at``."""
        new = TournamentStatus(status)
        with self.db.write() as s:
            row = find_tournament(s, tournament_id)
            row.status = new.value
            if new is TournamentStatus.RUNNING and row.started_at is None:
                row.started_at = utcnow()
            if new in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
                row.finished_at = utcnow()
            s.flush()
            return tournament_info(row)

    def update_tournament_options(self, tournament_id: int, **changes: Any) -> TournamentInfo:
        """Merge ``changes`` into the tournament's options (e.g. who runs it)."""
        with self.db.write() as s:
            row = find_tournament(s, tournament_id)
            row.options = {**dict(row.options), **changes}
            s.flush()
            return tournament_info(row)


def find_tournament(s: Session, name_or_id: str | int) -> Tournament:
    if isinstance(name_or_id, int):
        row = s.get(Tournament, name_or_id)
    else:
        row = s.scalars(select(Tournament).where(Tournament.name == name_or_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no tournament {name_or_id!r}")
    return row


def tournament_info(row: Tournament) -> TournamentInfo:
    settings = TournamentSettings(
        name=row.name,
        format=TournamentFormat(row.format),
        game=row.game,
        game_params=dict(row.game_params),
        time_control=dict(row.time_control),
        memory_limit_mb=row.memory_limit_mb,
        cycles=row.cycles,
        rounds=row.rounds,
        games_per_pairing=row.games_per_pairing,
        forfeit_policy=ForfeitPolicy(row.forfeit_policy),
        concurrency=row.concurrency,
        options=dict(row.options),
    )
    return TournamentInfo(
        id=row.id,
        settings=settings,
        status=TournamentStatus(row.status),
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
    )
