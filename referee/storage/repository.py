"""The storage API used by the tournament runner, the CLI and the gRPC services.

Every method is one transaction and returns plain frozen dataclasses (never ORM objects), so
results can cross threads and outlive sessions. The methods are synchronous; async callers
(the ``grpc.aio`` server) run them with ``asyncio.to_thread``.

The resume contract, which the database itself enforces:

* :meth:`Repository.claim_pairing` moves a pairing from ``pending`` to ``running`` only once;
* :meth:`Repository.record_game` writes a game, its seats, its record and its pairing's new
  status in ONE transaction, and refuses a second game for the same ``(pairing, game_index)``
  (a unique constraint, so even two racing runners cannot count a game twice);
* :meth:`Repository.resume_tournament` turns pairings cut off by a crash (``running``) back to
  ``pending`` and says, per pairing, which game indices are finished and which remain.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from referee.storage import tokens
from referee.storage.db import Database, open_database
from referee.storage.errors import (
    ConflictError,
    DuplicateGameError,
    NotFoundError,
    PairingStateError,
)
from referee.storage.models import (
    Bot,
    BotVersion,
    ForfeitPolicy,
    GameRow,
    GameSeat,
    MemoryMeasure,
    Pairing,
    PairingStatus,
    Player,
    PlayerKind,
    RatingEntry,
    RatingSnapshot,
    SourceKind,
    Token,
    Tournament,
    TournamentEntry,
    TournamentFormat,
    TournamentStatus,
    Verdict,
    utcnow,
)

if TYPE_CHECKING:
    from referee.ratings.results import GameResult

# --------------------------------------------------------------------------- returned values


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    id: int
    name: str
    kind: PlayerKind
    display_name: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token's public facts (never its secret, never its hash)."""

    key_id: str
    player_id: int
    label: str | None
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class BotVersionInfo:
    id: int
    bot_id: int
    bot_name: str
    version: str
    source_kind: SourceKind
    location: str
    content_hash: str | None
    owner_id: int | None
    created_at: datetime

    @property
    def label(self) -> str:
        """``name@version``, how tables and logs show a bot version."""
        return f"{self.bot_name}@{self.version}"


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


@dataclass(frozen=True, slots=True)
class PairingInfo:
    id: int
    tournament_id: int
    round: int
    board: int
    bot_a_id: int
    #: ``None`` for a bye.
    bot_b_id: int | None
    games_planned: int
    status: PairingStatus
    status_reason: str | None
    #: Game indices with a finished (counted) game.
    finished_games: tuple[int, ...]

    @property
    def remaining_games(self) -> tuple[int, ...]:
        """Game indices still to play (empty for finished and void pairings)."""
        if self.status in (PairingStatus.FINISHED, PairingStatus.VOID):
            return ()
        done = set(self.finished_games)
        return tuple(i for i in range(self.games_planned) if i not in done)


@dataclass(frozen=True, slots=True)
class ResumeState:
    """Where a tournament stands, per pairing status (see :meth:`Repository.resume_tournament`)."""

    tournament_id: int
    finished: tuple[PairingInfo, ...]
    pending: tuple[PairingInfo, ...]
    running: tuple[PairingInfo, ...]
    void: tuple[PairingInfo, ...]
    #: Pairings that were ``running`` and have just been put back to ``pending``.
    reset: tuple[int, ...] = ()

    @property
    def games_finished(self) -> int:
        every = (*self.finished, *self.pending, *self.running)
        return sum(len(p.finished_games) for p in every)

    @property
    def games_remaining(self) -> int:
        return sum(len(p.remaining_games) for p in (*self.pending, *self.running))


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a finished game, as the match runner measured it."""

    bot_version_id: int
    time_used_s: float = 0.0
    reported_think_s: float | None = None
    peak_memory_bytes: int | None = None
    memory_measure: MemoryMeasure = MemoryMeasure.UNKNOWN
    #: The bot's captured standard error (already bounded by the runner).
    stderr: str | None = None


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """Everything :meth:`Repository.record_game` stores about one game.

    ``seats[i]`` is seat ``i``. ``moves`` holds one mapping per ply, by convention with
    ``seat``, ``move``, ``measured_s`` (the referee's clock), ``reported_s`` (the bot's own
    think time) and ``memory_bytes``; any extra keys are kept.
    """

    game: str
    seats: Sequence[SeatResult]
    verdict: Verdict
    winner_seat: int | None
    plies: int
    started_at: datetime
    finished_at: datetime
    reason: str = ""
    #: The seat at fault for a fault verdict (``GameEnd.offender``).
    offender_seat: int | None = None
    termination: str | None = None
    game_params: Mapping[str, Any] = field(default_factory=dict)
    moves: Sequence[Mapping[str, Any]] = ()
    record_text: str | None = None
    record_json: Mapping[str, Any] | None = None
    tournament_id: int | None = None
    pairing_id: int | None = None
    game_index: int = 0
    #: The game id used on the wire; a new UUID when not given.
    uid: str | None = None


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    bot_version_id: int
    score: float
    time_used_s: float
    reported_think_s: float | None
    peak_memory_bytes: int | None
    memory_measure: MemoryMeasure


@dataclass(frozen=True, slots=True)
class GameSummary:
    id: int
    uid: str
    tournament_id: int | None
    pairing_id: int | None
    game_index: int
    game: str
    game_params: Mapping[str, Any]
    verdict: Verdict
    termination: str | None
    reason: str
    result: str
    winner_seat: int | None
    offender_seat: int | None
    #: Left out of standings and ratings (forfeit policy "void", or aborted).
    voided: bool
    #: Holds its pairing slot; ``False`` only for aborted games, which are replayed.
    counted: bool
    plies: int
    started_at: datetime
    finished_at: datetime
    seats: tuple[SeatInfo, ...]


@dataclass(frozen=True, slots=True)
class GameDetail:
    summary: GameSummary
    moves: tuple[Mapping[str, Any], ...]
    record_text: str | None
    record_json: Mapping[str, Any] | None
    stderr: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class RatingInput:
    """One bot version's line in a rating table to be saved."""

    bot_version_id: int
    rating: float
    ci_low: float | None = None
    ci_high: float | None = None
    mu: float | None = None
    sigma: float | None = None
    games: int = 0
    provisional: bool = False


@dataclass(frozen=True, slots=True)
class RatingRow:
    rank: int
    bot_version_id: int
    rating: float
    ci_low: float | None
    ci_high: float | None
    mu: float | None
    sigma: float | None
    games: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class RatingTable:
    snapshot_id: int
    method: str
    tournament_id: int | None
    ladder: str | None
    anchor: str | None
    games_counted: int
    taken_at: datetime
    rows: tuple[RatingRow, ...]


# ------------------------------------------------------------------------------ repository


class Repository:
    """The typed API over one :class:`~referee.storage.db.Database`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @classmethod
    def open(cls, url: str | None = None) -> Repository:
        """A repository on :func:`~referee.storage.db.open_database` ``(url)`` (migrated)."""
        return cls(open_database(url))

    def close(self) -> None:
        self.db.close()

    # ---- players and tokens

    def create_player(
        self, name: str, *, kind: PlayerKind = PlayerKind.PLAYER, display_name: str | None = None
    ) -> PlayerInfo:
        """A new player or team; :class:`ConflictError` if the name is taken."""
        try:
            with self.db.write() as s:
                player = Player(name=name, kind=PlayerKind(kind).value, display_name=display_name)
                s.add(player)
                s.flush()
                return _player_info(player)
        except IntegrityError as exc:
            raise ConflictError(f"a player named {name!r} already exists") from exc

    def get_player(self, name_or_id: str | int) -> PlayerInfo:
        with self.db.read() as s:
            return _player_info(_find_player(s, name_or_id))

    def list_players(self) -> list[PlayerInfo]:
        with self.db.read() as s:
            return [_player_info(p) for p in s.scalars(select(Player).order_by(Player.name))]

    def issue_token(self, player: str | int, *, label: str | None = None) -> str:
        """A new token for ``player``. The returned text is the only copy: only its hash is
        stored, so it cannot be shown again."""
        new = tokens.generate_token()
        with self.db.write() as s:
            owner = _find_player(s, player)
            s.add(
                Token(
                    player_id=owner.id,
                    key_id=new.hashed.key_id,
                    algorithm=new.hashed.algorithm,
                    salt=new.hashed.salt,
                    digest=new.hashed.digest,
                    label=label,
                )
            )
        return new.clear

    def authenticate(self, token: str) -> PlayerInfo | None:
        """The player owning ``token``, or ``None`` for an unknown, wrong, malformed or
        revoked token."""
        try:
            key_id, secret = tokens.split_token(token)
        except tokens.TokenFormatError:
            return None
        with self.db.read() as s:
            row = s.scalars(
                select(Token).where(Token.key_id == key_id).options(selectinload(Token.player))
            ).one_or_none()
            if row is None:
                tokens.burn_verification()
                return None
            stored = tokens.TokenHash(row.key_id, row.algorithm, row.salt, row.digest)
            if not tokens.verify_secret(secret, stored) or row.revoked_at is not None:
                return None
            player = _player_info(row.player)
        with self.db.write() as s:
            s.execute(update(Token).where(Token.key_id == key_id).values(last_used_at=utcnow()))
        return player

    def list_tokens(self, player: str | int) -> list[TokenInfo]:
        with self.db.read() as s:
            owner = _find_player(s, player)
            rows = s.scalars(select(Token).where(Token.player_id == owner.id).order_by(Token.id))
            return [
                TokenInfo(
                    r.key_id, r.player_id, r.label, r.created_at, r.last_used_at, r.revoked_at
                )
                for r in rows
            ]

    def revoke_token(self, key_id: str) -> bool:
        """Revoke one token by its public key id; ``False`` if unknown or already revoked."""
        with self.db.write() as s:
            result = s.execute(
                update(Token)
                .where(Token.key_id == key_id, Token.revoked_at.is_(None))
                .values(revoked_at=utcnow())
            )
            return _rowcount(result) == 1

    # ---- bots

    def add_bot_version(
        self,
        bot_name: str,
        version: str,
        *,
        source_kind: SourceKind,
        location: str,
        content_hash: str | None = None,
        owner: str | int | None = None,
    ) -> BotVersionInfo:
        """Register ``bot_name@version`` (creating the bot on first use).

        Registering the same version again with the same source and content hash returns the
        stored one; with a different body it raises :class:`ConflictError` (a version string
        names one body of code for ever, or ratings would mix two bots).
        """
        kind = SourceKind(source_kind)
        try:
            with self.db.write() as s:
                owner_id = _find_player(s, owner).id if owner is not None else None
                bot = s.scalars(select(Bot).where(Bot.name == bot_name)).one_or_none()
                if bot is None:
                    bot = Bot(name=bot_name, owner_id=owner_id)
                    s.add(bot)
                    s.flush()
                elif owner_id is not None and bot.owner_id not in (None, owner_id):
                    raise ConflictError(f"bot {bot_name!r} belongs to another player")
                elif owner_id is not None:
                    bot.owner_id = owner_id
                existing = s.scalars(
                    select(BotVersion).where(
                        BotVersion.bot_id == bot.id, BotVersion.version == version
                    )
                ).one_or_none()
                if existing is not None:
                    same = (existing.source_kind, existing.location, existing.content_hash) == (
                        kind.value,
                        location,
                        content_hash,
                    )
                    if not same:
                        raise ConflictError(
                            f"{bot_name}@{version} is already registered with other code; "
                            "register a new version instead"
                        )
                    return _version_info(existing, bot)
                row = BotVersion(
                    bot_id=bot.id,
                    version=version,
                    source_kind=kind.value,
                    location=location,
                    content_hash=content_hash,
                )
                s.add(row)
                s.flush()
                return _version_info(row, bot)
        except IntegrityError as exc:
            raise ConflictError(f"{bot_name}@{version} was registered concurrently") from exc

    def get_bot_version(self, bot_version_id: int) -> BotVersionInfo:
        with self.db.read() as s:
            row = s.get(BotVersion, bot_version_id, options=[selectinload(BotVersion.bot)])
            if row is None:
                raise NotFoundError(f"no bot version {bot_version_id}")
            return _version_info(row, row.bot)

    def find_bot_version(self, bot_name: str, version: str | None = None) -> BotVersionInfo:
        """``bot_name@version``, or the bot's newest version when ``version`` is ``None``."""
        with self.db.read() as s:
            query = (
                select(BotVersion)
                .join(Bot)
                .where(Bot.name == bot_name)
                .options(selectinload(BotVersion.bot))
            )
            if version is not None:
                query = query.where(BotVersion.version == version)
            row = s.scalars(query.order_by(BotVersion.id.desc()).limit(1)).one_or_none()
            if row is None:
                shown = bot_name if version is None else f"{bot_name}@{version}"
                raise NotFoundError(f"no bot {shown}")
            return _version_info(row, row.bot)

    def list_bot_versions(self, bot_name: str | None = None) -> list[BotVersionInfo]:
        with self.db.read() as s:
            query = select(BotVersion).join(Bot).options(selectinload(BotVersion.bot))
            if bot_name is not None:
                query = query.where(Bot.name == bot_name)
            rows = s.scalars(query.order_by(Bot.name, BotVersion.id))
            return [_version_info(r, r.bot) for r in rows]

    # ---- tournaments

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
                return _tournament_info(row)
        except IntegrityError as exc:
            raise ConflictError(f"a tournament named {settings.name!r} already exists") from exc

    def get_tournament(self, name_or_id: str | int) -> TournamentInfo:
        with self.db.read() as s:
            return _tournament_info(_find_tournament(s, name_or_id))

    def list_tournaments(self) -> list[TournamentInfo]:
        with self.db.read() as s:
            rows = s.scalars(select(Tournament).order_by(Tournament.id))
            return [_tournament_info(r) for r in rows]

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
            return [_version_info(v, b) for v, b in rows]

    def set_tournament_status(self, tournament_id: int, status: TournamentStatus) -> TournamentInfo:
        """Change the status; the first ``running`` sets ``started_at``, ``finished`` and
        ``cancelled`` set ``finished_at``."""
        new = TournamentStatus(status)
        with self.db.write() as s:
            row = _find_tournament(s, tournament_id)
            row.status = new.value
            if new is TournamentStatus.RUNNING and row.started_at is None:
                row.started_at = utcnow()
            if new in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
                row.finished_at = utcnow()
            s.flush()
            return _tournament_info(row)

    # ---- pairings

    def add_pairings(
        self,
        tournament_id: int,
        round_number: int,
        pairs: Sequence[tuple[int, int | None]],
        *,
        games_per_pairing: int | None = None,
    ) -> list[PairingInfo]:
        """Store a round's pairings as ``pending`` (boards numbered from 0 in the given order).

        ``(a, None)`` is a bye: stored as finished with no games. A round can be stored only
        once (:class:`ConflictError` otherwise), so a resumed Swiss tournament reads the round
        back with :meth:`pairings` instead of pairing it again.
        """
        try:
            with self.db.write() as s:
                tournament = _find_tournament(s, tournament_id)
                planned = games_per_pairing or tournament.games_per_pairing
                rows = []
                for board, (a, b) in enumerate(pairs):
                    bye = b is None
                    row = Pairing(
                        tournament_id=tournament.id,
                        round=round_number,
                        board=board,
                        bot_a_id=a,
                        bot_b_id=b,
                        games_planned=0 if bye else planned,
                        status=(PairingStatus.FINISHED if bye else PairingStatus.PENDING).value,
                        status_reason="bye" if bye else None,
                    )
                    s.add(row)
                    rows.append(row)
                s.flush()
                return [_pairing_info(r, ()) for r in rows]
        except IntegrityError as exc:
            raise ConflictError(
                f"round {round_number} of tournament {tournament_id} is already paired"
            ) from exc

    def pairings(
        self,
        tournament_id: int,
        *,
        round_number: int | None = None,
        status: PairingStatus | None = None,
    ) -> list[PairingInfo]:
        """A tournament's pairings by round and board, each with its finished game indices."""
        with self.db.read() as s:
            return _load_pairings(s, tournament_id, round_number, status)

    def get_pairing(self, pairing_id: int) -> PairingInfo:
        with self.db.read() as s:
            row = s.get(Pairing, pairing_id)
            if row is None:
                raise NotFoundError(f"no pairing {pairing_id}")
            return _pairing_info(row, _finished_slots(s, [pairing_id]).get(pairing_id, ()))

    def claim_pairing(self, pairing_id: int) -> bool:
        """Mark a pending pairing as running. ``False`` if it was not pending (another worker
        has it, it is finished or void): the caller must then not play it."""
        with self.db.write() as s:
            result = s.execute(
                update(Pairing)
                .where(Pairing.id == pairing_id, Pairing.status == PairingStatus.PENDING.value)
                .values(status=PairingStatus.RUNNING.value, updated_at=utcnow())
            )
            return _rowcount(result) == 1

    def release_pairing(self, pairing_id: int) -> bool:
        """Put a running pairing back to pending (e.g. its games were aborted at shutdown);
        finished games stay finished. ``False`` if it was not running."""
        with self.db.write() as s:
            result = s.execute(
                update(Pairing)
                .where(Pairing.id == pairing_id, Pairing.status == PairingStatus.RUNNING.value)
                .values(status=PairingStatus.PENDING.value, updated_at=utcnow())
            )
            return _rowcount(result) == 1

    def void_pairing(self, pairing_id: int, reason: str) -> None:
        """Cancel a pairing that is not finished (e.g. a bot withdrew). Games already played
        are kept but no more are played."""
        with self.db.write() as s:
            row = s.get(Pairing, pairing_id)
            if row is None:
                raise NotFoundError(f"no pairing {pairing_id}")
            if row.status == PairingStatus.FINISHED.value:
                raise PairingStateError(f"pairing {pairing_id} is finished and cannot be voided")
            row.status = PairingStatus.VOID.value
            row.status_reason = reason
            row.updated_at = utcnow()

    def resume_tournament(self, tournament_id: int) -> ResumeState:
        """Prepare a tournament to continue after a crash or a stop, in one transaction.

        Pairings left ``running`` (their games were cut off) go back to ``pending``; the
        games they finished before the cut stay, and their ``remaining_games`` say which
        game indices must still be played (from their start).
        """
        with self.db.write() as s:
            _find_tournament(s, tournament_id)
            stale = list(
                s.scalars(
                    select(Pairing.id).where(
                        Pairing.tournament_id == tournament_id,
                        Pairing.status == PairingStatus.RUNNING.value,
                    )
                )
            )
            if stale:
                s.execute(
                    update(Pairing)
                    .where(Pairing.id.in_(stale))
                    .values(status=PairingStatus.PENDING.value, updated_at=utcnow())
                )
            state = _resume_state(s, tournament_id)
        return ResumeState(
            tournament_id,
            state.finished,
            state.pending,
            state.running,
            state.void,
            reset=tuple(stale),
        )

    def tournament_state(self, tournament_id: int) -> ResumeState:
        """Like :meth:`resume_tournament` but read-only (for status displays)."""
        with self.db.read() as s:
            _find_tournament(s, tournament_id)
            return _resume_state(s, tournament_id)

    # ---- games

    def record_game(self, game: FinishedGame) -> GameSummary:
        """Store a finished game, its seats, moves, record and its pairing's new status in one
        transaction: after an error nothing of it is stored.

        An ``aborted`` game is kept for its record but holds no pairing slot (it will be
        replayed). A forfeit under a "void" forfeit policy is stored ``voided``: it holds its
        slot (it is not replayed) but is left out of results. Raises
        :class:`DuplicateGameError` if the slot already holds a game.
        """
        verdict = Verdict(game.verdict)
        aborted = verdict is Verdict.ABORTED
        if game.winner_seat is not None and not 0 <= game.winner_seat < len(game.seats):
            raise ValueError(f"winner seat {game.winner_seat} out of range")
        if aborted and game.winner_seat is not None:
            raise ValueError("an aborted game has no winner")
        try:
            with self.db.write() as s:
                tournament_id = game.tournament_id
                forfeit_policy = ForfeitPolicy.LOSS
                pairing: Pairing | None = None
                if game.pairing_id is not None:
                    pairing = _lock_pairing(s, game.pairing_id)
                    _check_pairing_game(pairing, game)
                    tournament_id = pairing.tournament_id
                if tournament_id is not None:
                    tournament = _find_tournament(s, tournament_id)
                    forfeit_policy = ForfeitPolicy(tournament.forfeit_policy)
                voided = aborted or (verdict.is_fault and forfeit_policy is ForfeitPolicy.VOID)
                row = GameRow(
                    uid=game.uid or uuid.uuid4().hex,
                    tournament_id=tournament_id,
                    pairing_id=game.pairing_id,
                    game_index=game.game_index,
                    slot=None if aborted or pairing is None else game.game_index,
                    game=game.game,
                    game_params=dict(game.game_params),
                    verdict=verdict.value,
                    termination=game.termination,
                    reason=game.reason,
                    result=_result_text(game.winner_seat, aborted),
                    winner_seat=game.winner_seat,
                    offender_seat=game.offender_seat,
                    voided=voided,
                    plies=game.plies,
                    moves=[dict(m) for m in game.moves],
                    record_text=game.record_text,
                    record_json=dict(game.record_json) if game.record_json is not None else None,
                    started_at=game.started_at,
                    finished_at=game.finished_at,
                )
                s.add(row)
                s.flush()
                for index, seat in enumerate(game.seats):
                    s.add(
                        GameSeat(
                            game_id=row.id,
                            seat=index,
                            bot_version_id=seat.bot_version_id,
                            score=_seat_score(index, game.winner_seat, aborted),
                            time_used_s=seat.time_used_s,
                            reported_think_s=seat.reported_think_s,
                            peak_memory_bytes=seat.peak_memory_bytes,
                            memory_measure=MemoryMeasure(seat.memory_measure).value,
                            stderr=seat.stderr,
                        )
                    )
                s.flush()
                if pairing is not None:
                    done = len(_finished_slots(s, [pairing.id]).get(pairing.id, ()))
                    finished = done >= pairing.games_planned
                    pairing.status = (
                        PairingStatus.FINISHED if finished else PairingStatus.RUNNING
                    ).value
                    pairing.updated_at = utcnow()
                    s.flush()
                s.refresh(row, ["seats"])
                return _game_summary(row)
        except IntegrityError as exc:
            if game.pairing_id is not None and not aborted and self._slot_taken(game):
                raise DuplicateGameError(game.pairing_id, game.game_index) from exc
            raise ConflictError(f"game not stored: {exc.orig}") from exc

    def _slot_taken(self, game: FinishedGame) -> bool:
        with self.db.read() as s:
            found = s.scalar(
                select(func.count())
                .select_from(GameRow)
                .where(GameRow.pairing_id == game.pairing_id, GameRow.slot == game.game_index)
            )
            return bool(found)

    def get_game(self, id_or_uid: int | str) -> GameDetail:
        """A game with its moves, record and each seat's stderr."""
        with self.db.read() as s:
            query = select(GameRow).options(selectinload(GameRow.seats))
            if isinstance(id_or_uid, int):
                query = query.where(GameRow.id == id_or_uid)
            else:
                query = query.where(GameRow.uid == id_or_uid)
            row = s.scalars(query).one_or_none()
            if row is None:
                raise NotFoundError(f"no game {id_or_uid!r}")
            return GameDetail(
                summary=_game_summary(row),
                moves=tuple(row.moves),
                record_text=row.record_text,
                record_json=row.record_json,
                stderr=tuple(seat.stderr for seat in row.seats),
            )

    def list_games(
        self,
        *,
        tournament_id: int | None = None,
        pairing_id: int | None = None,
        bot_version_id: int | None = None,
        include_aborted: bool = True,
        limit: int | None = 100,
        offset: int = 0,
    ) -> list[GameSummary]:
        """Games, oldest first (without their records: see :meth:`get_game`)."""
        with self.db.read() as s:
            query = select(GameRow).options(selectinload(GameRow.seats))
            if tournament_id is not None:
                query = query.where(GameRow.tournament_id == tournament_id)
            if pairing_id is not None:
                query = query.where(GameRow.pairing_id == pairing_id)
            if bot_version_id is not None:
                seated = select(GameSeat.game_id).where(GameSeat.bot_version_id == bot_version_id)
                query = query.where(GameRow.id.in_(seated))
            if not include_aborted:
                query = query.where(GameRow.verdict != Verdict.ABORTED.value)
            query = query.order_by(GameRow.finished_at, GameRow.id).offset(offset)
            if limit is not None:
                query = query.limit(limit)
            return [_game_summary(r) for r in s.scalars(query)]

    def count_games(self, *, tournament_id: int | None = None, counted_only: bool = True) -> int:
        """How many games are stored (by default those that count: not aborted, not void)."""
        with self.db.read() as s:
            query = select(func.count()).select_from(GameRow)
            if tournament_id is not None:
                query = query.where(GameRow.tournament_id == tournament_id)
            if counted_only:
                query = query.where(
                    GameRow.voided.is_(False), GameRow.verdict != Verdict.ABORTED.value
                )
            return int(s.scalar(query) or 0)

    def game_results(self, *, tournament_id: int | None = None) -> list[GameResult]:
        """Counted two-seat games as the rating code's :class:`GameResult` (names are
        ``bot@version`` labels), oldest first. Aborted games are left out; voided forfeits are
        kept with ``void=True`` (they still count among the forfeiter's forfeits)."""
        from referee.ratings.results import GameResult

        with self.db.read() as s:
            labels = {
                version_id: f"{name}@{version}"
                for version_id, name, version in s.execute(
                    select(BotVersion.id, Bot.name, BotVersion.version).join(Bot)
                )
            }
            query = (
                select(GameRow)
                .where(GameRow.verdict != Verdict.ABORTED.value)
                .options(selectinload(GameRow.seats))
                .order_by(GameRow.finished_at, GameRow.id)
            )
            if tournament_id is not None:
                query = query.where(GameRow.tournament_id == tournament_id)
            results = []
            for row in s.scalars(query):
                if len(row.seats) != 2:
                    continue
                verdict = Verdict(row.verdict)
                forfeit = verdict.is_fault and row.winner_seat is not None
                results.append(
                    GameResult.from_winner(
                        labels[row.seats[0].bot_version_id],
                        labels[row.seats[1].bot_version_id],
                        row.winner_seat,
                        verdict.value,
                        forfeit=forfeit,
                        void=row.voided and forfeit,
                    )
                )
            return results

    # ---- ratings

    def save_ratings(
        self,
        method: str,
        rows: Sequence[RatingInput],
        *,
        tournament_id: int | None = None,
        ladder: str | None = None,
        anchor: str | None = None,
        games_counted: int = 0,
        taken_at: datetime | None = None,
    ) -> int:
        """Store a rating table (rank = order of ``rows``) for a tournament or a ladder;
        returns the snapshot id."""
        if (tournament_id is None) == (ladder is None):
            raise ValueError("give exactly one of tournament_id and ladder")
        with self.db.write() as s:
            snapshot = RatingSnapshot(
                tournament_id=tournament_id,
                ladder=ladder,
                method=method,
                anchor=anchor,
                games_counted=games_counted,
                taken_at=taken_at or utcnow(),
            )
            s.add(snapshot)
            s.flush()
            for rank, r in enumerate(rows, start=1):
                s.add(
                    RatingEntry(
                        snapshot_id=snapshot.id,
                        bot_version_id=r.bot_version_id,
                        rank=rank,
                        rating=r.rating,
                        ci_low=r.ci_low,
                        ci_high=r.ci_high,
                        mu=r.mu,
                        sigma=r.sigma,
                        games=r.games,
                        provisional=r.provisional,
                    )
                )
            s.flush()
            return snapshot.id

    def latest_ratings(
        self, method: str, *, tournament_id: int | None = None, ladder: str | None = None
    ) -> RatingTable | None:
        """The newest rating table of ``method`` for a tournament or a ladder."""
        tables = self.rating_history(method, tournament_id=tournament_id, ladder=ladder, limit=1)
        return tables[0] if tables else None

    def rating_history(
        self,
        method: str,
        *,
        tournament_id: int | None = None,
        ladder: str | None = None,
        limit: int | None = None,
    ) -> list[RatingTable]:
        """Rating tables of ``method``, newest first."""
        if (tournament_id is None) == (ladder is None):
            raise ValueError("give exactly one of tournament_id and ladder")
        with self.db.read() as s:
            query = (
                select(RatingSnapshot)
                .where(RatingSnapshot.method == method)
                .options(selectinload(RatingSnapshot.entries))
                .order_by(RatingSnapshot.taken_at.desc(), RatingSnapshot.id.desc())
            )
            if tournament_id is not None:
                query = query.where(RatingSnapshot.tournament_id == tournament_id)
            else:
                query = query.where(RatingSnapshot.ladder == ladder)
            if limit is not None:
                query = query.limit(limit)
            return [_rating_table(snap) for snap in s.scalars(query)]


# ------------------------------------------------------------------------------- helpers


def _rowcount(result: Any) -> int:
    return int(getattr(result, "rowcount", 0))


def _find_player(s: Session, name_or_id: str | int) -> Player:
    if isinstance(name_or_id, int):
        row = s.get(Player, name_or_id)
    else:
        row = s.scalars(select(Player).where(Player.name == name_or_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no player {name_or_id!r}")
    return row


def _find_tournament(s: Session, name_or_id: str | int) -> Tournament:
    if isinstance(name_or_id, int):
        row = s.get(Tournament, name_or_id)
    else:
        row = s.scalars(select(Tournament).where(Tournament.name == name_or_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no tournament {name_or_id!r}")
    return row


def _lock_pairing(s: Session, pairing_id: int) -> Pairing:
    # FOR UPDATE serialises two writers of the same pairing on PostgreSQL (SQLite's
    # BEGIN IMMEDIATE already serialises every writer; the clause is ignored there).
    row = s.scalars(select(Pairing).where(Pairing.id == pairing_id).with_for_update()).one_or_none()
    if row is None:
        raise NotFoundError(f"no pairing {pairing_id}")
    return row


def _check_pairing_game(pairing: Pairing, game: FinishedGame) -> None:
    if pairing.status == PairingStatus.VOID.value:
        raise PairingStateError(f"pairing {pairing.id} is void")
    if game.tournament_id is not None and game.tournament_id != pairing.tournament_id:
        raise ValueError(
            f"pairing {pairing.id} belongs to tournament {pairing.tournament_id}, "
            f"not {game.tournament_id}"
        )
    if not 0 <= game.game_index < pairing.games_planned:
        raise ValueError(
            f"game index {game.game_index} out of range for pairing {pairing.id} "
            f"({pairing.games_planned} games)"
        )
    seated = sorted(seat.bot_version_id for seat in game.seats)
    expected = sorted(v for v in (pairing.bot_a_id, pairing.bot_b_id) if v is not None)
    if seated != expected:
        raise ValueError(f"the seats {seated} are not the bots of pairing {pairing.id}")


def _result_text(winner: int | None, aborted: bool) -> str:
    if aborted:
        return "*"
    if winner is None:
        return "1/2-1/2"
    return "1-0" if winner == 0 else "0-1"


def _seat_score(seat: int, winner: int | None, aborted: bool) -> float:
    if aborted:
        return 0.0
    if winner is None:
        return 0.5
    return 1.0 if seat == winner else 0.0


def _finished_slots(s: Session, pairing_ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    if not pairing_ids:
        return {}
    found: dict[int, list[int]] = {}
    rows = s.execute(
        select(GameRow.pairing_id, GameRow.slot)
        .where(GameRow.pairing_id.in_(pairing_ids), GameRow.slot.is_not(None))
        .order_by(GameRow.slot)
    )
    for pairing_id, slot in rows:
        assert pairing_id is not None and slot is not None
        found.setdefault(pairing_id, []).append(slot)
    return {k: tuple(v) for k, v in found.items()}


def _load_pairings(
    s: Session,
    tournament_id: int,
    round_number: int | None = None,
    status: PairingStatus | None = None,
) -> list[PairingInfo]:
    query = select(Pairing).where(Pairing.tournament_id == tournament_id)
    if round_number is not None:
        query = query.where(Pairing.round == round_number)
    if status is not None:
        query = query.where(Pairing.status == PairingStatus(status).value)
    rows = list(s.scalars(query.order_by(Pairing.round, Pairing.board)))
    slots = _finished_slots(s, [r.id for r in rows])
    return [_pairing_info(r, slots.get(r.id, ())) for r in rows]


def _resume_state(s: Session, tournament_id: int) -> ResumeState:
    every = _load_pairings(s, tournament_id)

    def having(status: PairingStatus) -> tuple[PairingInfo, ...]:
        return tuple(p for p in every if p.status is status)

    return ResumeState(
        tournament_id,
        finished=having(PairingStatus.FINISHED),
        pending=having(PairingStatus.PENDING),
        running=having(PairingStatus.RUNNING),
        void=having(PairingStatus.VOID),
    )


def _player_info(row: Player) -> PlayerInfo:
    return PlayerInfo(row.id, row.name, PlayerKind(row.kind), row.display_name, row.created_at)


def _version_info(row: BotVersion, bot: Bot) -> BotVersionInfo:
    return BotVersionInfo(
        id=row.id,
        bot_id=bot.id,
        bot_name=bot.name,
        version=row.version,
        source_kind=SourceKind(row.source_kind),
        location=row.location,
        content_hash=row.content_hash,
        owner_id=bot.owner_id,
        created_at=row.created_at,
    )


def _tournament_info(row: Tournament) -> TournamentInfo:
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


def _pairing_info(row: Pairing, finished: tuple[int, ...]) -> PairingInfo:
    return PairingInfo(
        id=row.id,
        tournament_id=row.tournament_id,
        round=row.round,
        board=row.board,
        bot_a_id=row.bot_a_id,
        bot_b_id=row.bot_b_id,
        games_planned=row.games_planned,
        status=PairingStatus(row.status),
        status_reason=row.status_reason,
        finished_games=finished,
    )


def _game_summary(row: GameRow) -> GameSummary:
    return GameSummary(
        id=row.id,
        uid=row.uid,
        tournament_id=row.tournament_id,
        pairing_id=row.pairing_id,
        game_index=row.game_index,
        game=row.game,
        game_params=dict(row.game_params),
        verdict=Verdict(row.verdict),
        termination=row.termination,
        reason=row.reason,
        result=row.result,
        winner_seat=row.winner_seat,
        offender_seat=row.offender_seat,
        voided=row.voided,
        counted=row.slot is not None or (row.pairing_id is None and row.verdict != "aborted"),
        plies=row.plies,
        started_at=row.started_at,
        finished_at=row.finished_at,
        seats=tuple(
            SeatInfo(
                seat=seat.seat,
                bot_version_id=seat.bot_version_id,
                score=seat.score,
                time_used_s=seat.time_used_s,
                reported_think_s=seat.reported_think_s,
                peak_memory_bytes=seat.peak_memory_bytes,
                memory_measure=MemoryMeasure(seat.memory_measure),
            )
            for seat in row.seats
        ),
    )


def _rating_table(snap: RatingSnapshot) -> RatingTable:
    return RatingTable(
        snapshot_id=snap.id,
        method=snap.method,
        tournament_id=snap.tournament_id,
        ladder=snap.ladder,
        anchor=snap.anchor,
        games_counted=snap.games_counted,
        taken_at=snap.taken_at,
        rows=tuple(
            RatingRow(
                rank=e.rank,
                bot_version_id=e.bot_version_id,
                rating=e.rating,
                ci_low=e.ci_low,
                ci_high=e.ci_high,
                mu=e.mu,
                sigma=e.sigma,
                games=e.games,
                provisional=e.provisional,
            )
            for e in snap.entries
        ),
    )
