"""One game job on a worker: play the game with both bots launched here, record it once.

The game is built from the stored tournament exactly as the in-process runner builds it
(:mod:`referee.tournament.gamespec`), and played and stored by the same code
(:func:`referee.play.store.play_and_store`, so :func:`referee.play.local.play_match` and
the sandbox). The result is written with a *lease guard* in the same transaction: the job's
row is locked and must still be ``doing`` on this worker. A worker that was declared dead
(its heartbeat stopped, e.g. SIGSTOP) and wakes up therefore cannot write over the game
another worker is replaying; together with the ``UNIQUE(pairing, slot)`` key this makes
results exactly-once even though play is at-least-once.

A game that aborts (a bot never connected...) or raises is retried by the queue; the third
failure is recorded void with the reason instead, by the tournament's rule for a game that
keeps aborting (:mod:`referee.tournament.aborts`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from structlog.contextvars import bound_contextvars

from engine.game import Game
from engine.records.openings import Book
from referee.errors import RefereeError
from referee.match.runner import new_game_id
from referee.play.game import GamePlayer
from referee.play.store import has_result, play_and_store
from referee.sandbox.isolation import Isolation, choose
from referee.storage import (
    BotVersionInfo,
    DuplicateGameError,
    GameSummary,
    PairingInfo,
    PairingStatus,
    Repository,
    TournamentInfo,
)
from referee.telemetry.logs import bound_job, get_logger
from referee.tournament.aborts import gives_up, record_given_up
from referee.tournament.gamespec import (
    check_isolation,
    game_terms,
    slot_filing,
    slot_labels,
    slot_seats,
    tournament_book,
    tournament_game,
)
from referee.workers.live import LivePublisher, NotifyBroadcast

log = get_logger("referee.workers.job")


class LeaseLost(RefereeError, RuntimeError):
    """This worker no longer holds the job (it was declared dead and the game handed on)."""


class GameFailed(RefereeError, RuntimeError):
    """An attempt that did not produce a result; the queue retries the job."""


@dataclass(slots=True)
class TournamentPlan:
    """What a worker needs of one tournament to play any of its games (read once)."""

    info: TournamentInfo
    game: Game[Any]
    player: GamePlayer
    versions: dict[int, BotVersionInfo]
    book: Book | None


@dataclass
class WorkerState:
    """What every game job on one worker process shares."""

    repo: Repository
    no_sandbox: bool = False
    publisher: LivePublisher | None = None
    #: Uploaded (ladder) bots may run without the sandbox (``--allow-unsandboxed-uploads``).
    allow_unsandboxed_uploads: bool = False
    isolation: Isolation | None = None
    plans: dict[int, TournamentPlan] = field(default_factory=dict)
    #: Job id -> (the worker id it was fetched by, the task playing it).
    running: dict[int, tuple[int | None, asyncio.Task[Any]]] = field(default_factory=dict)
    #: Set once this worker found its games handed on: it is stopping its games and exiting.
    abandoning: bool = False
    #: This process's worker id in the queue (learnt from the jobs it takes).
    own_ids: set[int] = field(default_factory=set)

    def plan(self, tournament_id: int) -> TournamentPlan:
        found = self.plans.get(tournament_id)
        if found is not None:
            return found
        if self.isolation is None:
            self.isolation = choose(self.no_sandbox)
        info = self.repo.get_tournament(tournament_id)
        game = tournament_game(info)
        terms = game_terms(info, game, isolation=self.isolation)
        versions = {v.id: v for v in self.repo.tournament_entrants(tournament_id)}
        check_isolation(self.isolation, versions.values(), allow_none=self.no_sandbox)
        plan = TournamentPlan(info, game, GamePlayer(terms), versions, tournament_book(info))
        self.plans[tournament_id] = plan
        return plan


#: Seconds between two tries to learn whether a job is still this worker's, while the
#: database does not answer.
LEASE_RETRY_S = 1.0


def lease_guard(job_id: int, worker_id: int | None) -> Callable[[Session], None]:
    """A :meth:`Repository.record_game` guard: the job is still ``doing`` on ``worker_id``
    (its row locked until the game is committed, so a retry cannot slip in between)."""

    def check(s: Session) -> None:
        row = s.execute(
            text(
                "SELECT status::text, worker_id FROM procrastinate_jobs WHERE id = :id FOR UPDATE"
            ),
            {"id": job_id},
        ).one_or_none()
        if row is None or row[0] != "doing" or row[1] != worker_id:
            raise LeaseLost(f"job {job_id} is no longer this worker's ({row})")

    return check


def lease_held(repo: Repository, job_id: int, worker_id: int | None) -> bool:
    """Whether job ``job_id`` is still ``doing`` on ``worker_id``."""
    with repo.db.read() as s:
        row = s.execute(
            text("SELECT status::text, worker_id FROM procrastinate_jobs WHERE id = :id"),
            {"id": job_id},
        ).one_or_none()
    return row is not None and tuple(row) == ("doing", worker_id)


async def lease_known(repo: Repository, job_id: int, worker_id: int | None) -> bool:
    """:func:`lease_held`, asked again every :data:`LEASE_RETRY_S` until the database answers.
    An attempt that failed while its worker was cut from the database (its result could not
    be stored) must not go on to tell the queue anything (a retry, a failure) about a job the
    others may have handed on meanwhile; the lease watcher ends the process if they did."""
    waiting = False
    while True:
        try:
            return await asyncio.to_thread(lease_held, repo, job_id, worker_id)
        except (DBAPIError, OSError) as exc:
            if not waiting:
                log.warning("lease_check_waiting", reason=str(exc).split("\n")[0])
            waiting = True
            await asyncio.sleep(LEASE_RETRY_S)


async def play_job(
    state: WorkerState, job_id: int, worker_id: int | None, attempts: int, kwargs: dict[str, Any]
) -> str:
    """Run one game job (``attempts``: failed attempts before this one); a short outcome."""
    t_id, p_id, index = (int(kwargs[k]) for k in ("tournament_id", "pairing_id", "game_index"))
    with bound_job(job_id), bound_contextvars(pairing_id=p_id, game_index=index):
        pairing = await asyncio.to_thread(state.repo.get_pairing, p_id)
        if index in pairing.finished_games or pairing.status is PairingStatus.VOID:
            log.info("job_already_done", status=str(pairing.status))
            return "already recorded"
        plan = await asyncio.to_thread(state.plan, t_id)
        attempt = attempts + 1
        guard = lease_guard(job_id, worker_id)
        try:
            summary = await _play(state, plan, pairing, index, guard)
        except (LeaseLost, asyncio.CancelledError):
            raise
        except DuplicateGameError:
            log.info("job_duplicate")
            return "already recorded"
        except Exception as exc:
            log.exception("game_failed", attempt=attempt)
            reason = f"{type(exc).__name__}: {exc}"
        else:
            if has_result(summary):
                return "recorded"
            reason = summary.reason
        if not await lease_known(state.repo, job_id, worker_id):
            # Handed on while this attempt failed (e.g. its connection was cut while it was
            # stopped): the queue must not be told anything about the job now.
            raise LeaseLost(f"job {job_id} was handed on while it failed: {reason}")
        if not gives_up(attempt):
            log.warning("game_retry", attempt=attempt, reason=reason)
            raise GameFailed(reason)
        seats = slot_seats(plan.versions, pairing, index)
        await asyncio.to_thread(
            record_given_up,
            state.repo,
            plan.info,
            plan.game,
            pairing,
            index,
            seats,
            f"attempt {attempt}: {reason}",
            attempt,
            guard,
        )
        return "void"


async def _play(
    state: WorkerState,
    plan: TournamentPlan,
    pairing: PairingInfo,
    index: int,
    guard: Callable[[Session], None],
) -> GameSummary:
    seats = slot_seats(plan.versions, pairing, index)
    labels, opening = slot_labels(plan.info, plan.book, pairing, index)
    uid = new_game_id()
    with bound_contextvars(game_id=uid):
        log.info("game_started", seats=[s.label for s in seats])
        stored = await play_and_store(
            plan.player,
            state.repo,
            seats,
            slot_filing(plan.info, pairing, index),
            uid=uid,
            labels=labels,
            opening=opening,
            broadcast=NotifyBroadcast(state.publisher) if state.publisher is not None else None,
            guard=guard,
        )
        summary = stored.summary
        log.info("game_recorded", verdict=str(summary.verdict), result=summary.result)
        return summary
