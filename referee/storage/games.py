"""Finished games: their seats, moves, records and results, written in one transaction.

:meth:`GameRepository.record_game` writes a game, its seats, its record and its pairing's new
status in ONE transaction, and refuses a second game for the same ``(pairing, game_index)``
(a unique constraint, so even two racing runners cannot count a game twice).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from engine.adjudication.verdicts import Verdict, parse_ending
from engine.outcome import points, result_text
from referee.storage.base import AreaRepository
from referee.storage.enums import ForfeitPolicy, GameKind, MemoryMeasure, PairingStatus
from referee.storage.errors import (
    ConflictError,
    DuplicateGameError,
    NotFoundError,
    PairingStateError,
)

# The value types of a stored game, imported from here by the rest of the referee.
from referee.storage.gametypes import FinishedGame as FinishedGame
from referee.storage.gametypes import GameDetail as GameDetail
from referee.storage.gametypes import GameSummary as GameSummary
from referee.storage.gametypes import SeatInfo as SeatInfo
from referee.storage.gametypes import SeatResult as SeatResult
from referee.storage.models import Bot, BotVersion, GameRow, GameSeat, Pairing, utcnow
from referee.storage.pairings import finished_slots, lock_pairing
from referee.storage.tournaments import find_tournament

if TYPE_CHECKING:
    from referee.ratings.results import GameResult


class GameRepository(AreaRepository):
    """Storing finished games and reading them back (whole, listed, counted, as results)."""

    def record_game(
        self, game: FinishedGame, guard: Callable[[Session], None] | None = None
    ) -> GameSummary:
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
        if game.given_up and not aborted:
            raise ValueError("only an aborted game is given up")
        try:
            with self.db.write() as s:
                if guard is not None:
                    guard(s)
                pairing: Pairing | None = None
                if game.pairing_id is not None:
                    pairing = lock_pairing(s, game.pairing_id)
                    _check_pairing_game(pairing, game)
                row = _game_row(s, game, verdict, pairing)
                s.add(row)
                s.flush()
                for index, seat in enumerate(game.seats):
                    s.add(_seat_row(row.id, index, seat, game.winner_seat, aborted))
                s.flush()
                if pairing is not None:
                    _advance_pairing(s, pairing)
                s.refresh(row, ["seats"])
                return game_summary(row)
        except IntegrityError as exc:
            holds_slot = not aborted or game.given_up
            if game.pairing_id is not None and holds_slot and self._slot_taken(game):
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

    def has_game(self, uid: str) -> bool:
        """Whether a game ``uid`` is stored."""
        with self.db.read() as s:
            return s.scalar(select(GameRow.id).where(GameRow.uid == uid)) is not None

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
                summary=game_summary(row),
                moves=tuple(row.moves),
                record_text=row.record_text,
                record_json=row.record_json,
                stderr=tuple(seat.stderr for seat in row.seats),
                failure_packs=tuple(seat.failure_pack for seat in row.seats),
            )

    def set_game_record(
        self, id_or_uid: int | str, record_text: str, record_json: Mapping[str, Any] | None
    ) -> None:
        """Replace a stored game's record (e.g. with an annotated one); the result, seats and
        moves are untouched."""
        with self.db.write() as s:
            column = GameRow.id if isinstance(id_or_uid, int) else GameRow.uid
            row = s.scalars(select(GameRow).where(column == id_or_uid)).one_or_none()
            if row is None:
                raise NotFoundError(f"no game {id_or_uid!r}")
            row.record_text = record_text
            row.record_json = dict(record_json) if record_json is not None else None

    def void_games(self, uids: Sequence[str]) -> list[str]:
        """Void the stored games ``uids`` (a feeder's run of casual forfeits): kept with their
        records, left out of ratings from now on. Returns the games (``tetress``...) whose
        tables changed; uids not stored (or already void) change nothing."""
        if not uids:
            return []
        with self.db.write() as s:
            rows = s.scalars(
                select(GameRow).where(GameRow.uid.in_(list(uids)), GameRow.voided.is_(False))
            ).all()
            for row in rows:
                row.voided = True
            return sorted({row.game for row in rows})

    def list_games(
        self,
        *,
        tournament_id: int | None = None,
        pairing_id: int | None = None,
        bot_version_id: int | None = None,
        include_aborted: bool = True,
        limit: int | None = 100,
        offset: int = 0,
        game: str | None = None,
        include_validation: bool = False,
    ) -> list[GameSummary]:
        """Games, oldest first (without their records: see :meth:`get_game`); ``game``: only
        games of that game (e.g. ``tetress``). Validation games are private, so left out
        unless ``include_validation`` (a student's own list, the instructor's)."""
        with self.db.read() as s:
            query = select(GameRow).options(selectinload(GameRow.seats))
            if not include_validation:
                query = query.where(GameRow.kind == GameKind.RATED.value)
            if game is not None:
                query = query.where(GameRow.game == game)
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
            return [game_summary(r) for r in s.scalars(query)]

    def count_games(self, *, tournament_id: int | None = None, counted_only: bool = True) -> int:
        """How many games are stored (by default those that count: not aborted, not void,
        not validation games)."""
        with self.db.read() as s:
            query = select(func.count()).select_from(GameRow)
            if tournament_id is not None:
                query = query.where(GameRow.tournament_id == tournament_id)
            if counted_only:
                query = query.where(
                    GameRow.voided.is_(False),
                    GameRow.verdict != Verdict.ABORTED.value,
                    GameRow.kind == GameKind.RATED.value,
                )
            return int(s.scalar(query) or 0)

    def game_results(
        self, *, tournament_id: int | None = None, game: str | None = None
    ) -> list[GameResult]:
        """Counted two-seat games as the rating code's :class:`GameResult` (names are
        ``bot@version`` labels), oldest first. Aborted and validation games are left out;
        voided forfeits are kept with ``void=True`` (they still count among the forfeiter's
        forfeits). ``game``: only games of that game, so that a table never mixes two games'
        ratings."""

        with self.db.read() as s:
            labels = {
                version_id: f"{name}@{version}"
                for version_id, name, version in s.execute(
                    select(BotVersion.id, Bot.name, BotVersion.version).join(Bot)
                )
            }
            query = (
                select(GameRow)
                .where(
                    GameRow.verdict != Verdict.ABORTED.value,
                    GameRow.kind == GameKind.RATED.value,
                )
                .options(selectinload(GameRow.seats))
                .order_by(GameRow.finished_at, GameRow.id)
            )
            if tournament_id is not None:
                query = query.where(GameRow.tournament_id == tournament_id)
            if game is not None:
                query = query.where(GameRow.game == game)
            results = []
            for row in s.scalars(query):
                if len(row.seats) != 2:
                    continue
                results.append(
                    rated_result(
                        labels[row.seats[0].bot_version_id],
                        labels[row.seats[1].bot_version_id],
                        row.winner_seat,
                        row.verdict,
                        voided=row.voided,
                    )
                )
            return results


def rated_result(
    first: str, second: str, winner_seat: int | None, verdict: str, *, voided: bool
) -> GameResult:
    """A stored game as the rating code's result: a fault with a winner is a forfeit, and a
    forfeit stored ``voided`` (a tournament's "void" forfeit policy) is kept out of ratings
    while still counted among the forfeiter's forfeits. The one place this rule is written
    (the stored results and the web tables read it from here)."""
    from referee.ratings.results import GameResult

    forfeit = Verdict(verdict).is_fault and winner_seat is not None
    return GameResult.from_winner(
        first, second, winner_seat, str(verdict), forfeit=forfeit, void=voided and forfeit
    )


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


def _game_row(s: Session, game: FinishedGame, verdict: Verdict, pairing: Pairing | None) -> GameRow:
    """The game's row; a fault under its tournament's "void" forfeit policy is ``voided``."""
    aborted = verdict is Verdict.ABORTED
    tournament_id = game.tournament_id if pairing is None else pairing.tournament_id
    forfeit_policy = ForfeitPolicy.LOSS
    if tournament_id is not None:
        forfeit_policy = ForfeitPolicy(find_tournament(s, tournament_id).forfeit_policy)
    voided = aborted or game.voided or (verdict.is_fault and forfeit_policy is ForfeitPolicy.VOID)
    return GameRow(
        uid=game.uid or uuid.uuid4().hex,
        tournament_id=tournament_id,
        pairing_id=game.pairing_id,
        game_index=game.game_index,
        # An aborted game holds no slot: it is replayed (unless given up on).
        slot=None if (aborted and not game.given_up) or pairing is None else game.game_index,
        game=game.game,
        game_params=dict(game.game_params),
        verdict=verdict.value,
        termination=None if game.termination is None else str(game.termination),
        reason=game.reason,
        result=result_text(game.winner_seat, aborted=aborted),
        winner_seat=game.winner_seat,
        offender_seat=game.offender_seat,
        voided=voided,
        kind=GameKind(game.kind).value,
        plies=game.plies,
        moves=[dict(m) for m in game.moves],
        record_text=game.record_text,
        record_json=dict(game.record_json) if game.record_json is not None else None,
        started_at=game.started_at,
        finished_at=game.finished_at,
    )


def _seat_row(
    game_id: int, index: int, seat: SeatResult, winner: int | None, aborted: bool
) -> GameSeat:
    return GameSeat(
        game_id=game_id,
        seat=index,
        bot_version_id=seat.bot_version_id,
        score=points(index, winner, aborted=aborted),
        time_used_s=seat.time_used_s,
        reported_think_s=seat.reported_think_s,
        peak_memory_bytes=seat.peak_memory_bytes,
        memory_measure=MemoryMeasure(seat.memory_measure).value,
        stderr=seat.stderr,
        failure_pack=seat.failure_pack,
    )


def _advance_pairing(s: Session, pairing: Pairing) -> None:
    """A pairing with a game stored is ``running``, and ``finished`` once every slot is full."""
    done = len(finished_slots(s, [pairing.id]).get(pairing.id, ()))
    finished = done >= pairing.games_planned
    pairing.status = (PairingStatus.FINISHED if finished else PairingStatus.RUNNING).value
    pairing.updated_at = utcnow()
    s.flush()


def game_summary(row: GameRow) -> GameSummary:
    return GameSummary(
        id=row.id,
        uid=row.uid,
        tournament_id=row.tournament_id,
        pairing_id=row.pairing_id,
        game_index=row.game_index,
        game=row.game,
        game_params=dict(row.game_params),
        verdict=Verdict(row.verdict),
        termination=parse_ending(row.termination) if row.termination else None,
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
        sandbox=_sandbox_tag(row),
        kind=GameKind(row.kind),
    )


_SANDBOX_TAG = re.compile(r'^\[Sandbox "([^"]*)"\]$', re.MULTILINE)


def _sandbox_tag(row: GameRow) -> str | None:
    """The ``Sandbox`` tag of a stored game's record, if it has one."""
    tags = (row.record_json or {}).get("tags")
    if isinstance(tags, dict) and isinstance(tags.get("Sandbox"), str):
        return str(tags["Sandbox"])
    found = _SANDBOX_TAG.search(row.record_text or "")
    return found.group(1) if found else None
