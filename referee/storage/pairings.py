"""Pairings: who meets whom in which round, their status, and resuming after a crash.

A pairing is claimed (``pending -> running``) before its first game, so two runners never
play the same pairing; :meth:`PairingRepository.resume_tournament` turns pairings cut off by
a crash back to ``pending`` and says which game indices remain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from referee.storage.base import AreaRepository, rowcount
from referee.storage.enums import PairingStatus
from referee.storage.errors import ConflictError, NotFoundError, PairingStateError
from referee.storage.models import GameRow, Pairing, utcnow
from referee.storage.tournaments import find_tournament


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


class PairingRepository(AreaRepository):
    """A tournament's pairings and their claim / release / void life cycle."""

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
                tournament = find_tournament(s, tournament_id)
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
                return [pairing_info(r, ()) for r in rows]
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
            return load_pairings(s, tournament_id, round_number, status)

    def get_pairing(self, pairing_id: int) -> PairingInfo:
        with self.db.read() as s:
            row = s.get(Pairing, pairing_id)
            if row is None:
                raise NotFoundError(f"no pairing {pairing_id}")
            return pairing_info(row, finished_slots(s, [pairing_id]).get(pairing_id, ()))

    def claim_pairing(self, pairing_id: int) -> bool:
        """Mark a pending pairing as running. ``False`` if it was not pending (another worker
        has it, it is finished or void): the caller must then not play it."""
        return self._move(pairing_id, PairingStatus.PENDING, PairingStatus.RUNNING)

    def release_pairing(self, pairing_id: int) -> bool:
        """Put a running pairing back to pending (e.g. its games were aborted at shutdown);
        finished games stay finished. ``False`` if it was not running."""
        return self._move(pairing_id, PairingStatus.RUNNING, PairingStatus.PENDING)

    def _move(self, pairing_id: int, was: PairingStatus, to: PairingStatus) -> bool:
        """Set a pairing's status to ``to`` if it is ``was``; ``False`` if it was not."""
        with self.db.write() as s:
            result = s.execute(
                update(Pairing)
                .where(Pairing.id == pairing_id, Pairing.status == was.value)
                .values(status=to.value, updated_at=utcnow())
            )
            return rowcount(result) == 1

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
            find_tournament(s, tournament_id)
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
            state = resume_state(s, tournament_id)
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
            find_tournament(s, tournament_id)
            return resume_state(s, tournament_id)


def lock_pairing(s: Session, pairing_id: int) -> Pairing:
    # FOR UPDATE serialises two writers of the same pairing on PostgreSQL (SQLite's
    # BEGIN IMMEDIATE already serialises every writer; the clause is ignored there).
    row = s.scalars(select(Pairing).where(Pairing.id == pairing_id).with_for_update()).one_or_none()
    if row is None:
        raise NotFoundError(f"no pairing {pairing_id}")
    return row


def finished_slots(s: Session, pairing_ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
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


def load_pairings(
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
    slots = finished_slots(s, [r.id for r in rows])
    return [pairing_info(r, slots.get(r.id, ())) for r in rows]


def resume_state(s: Session, tournament_id: int) -> ResumeState:
    every = load_pairings(s, tournament_id)

    def having(status: PairingStatus) -> tuple[PairingInfo, ...]:
        return tuple(p for p in every if p.status is status)

    return ResumeState(
        tournament_id,
        finished=having(PairingStatus.FINISHED),
        pending=having(PairingStatus.PENDING),
        running=having(PairingStatus.RUNNING),
        void=having(PairingStatus.VOID),
    )


def pairing_info(row: Pairing, finished: tuple[int, ...]) -> PairingInfo:
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
