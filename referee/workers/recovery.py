"""Stalled games and stale workers: at-least-once play without double results.

* Every worker sends a heartbeat (procrastinate's ``procrastinate_workers.last_heartbeat``).
  :func:`recover_stalled`, run by every live worker each heartbeat, finds the running game
  jobs of workers silent for longer than the stall timeout (killed, machine lost, stopped)
  and puts them back in the queue, where another worker plays the game again from its start;
  the third failed attempt is recorded void with the reason instead. Each hand-on checks,
  under the job row's lock, that the job is still the silent worker's, so a stalled job is
  handed on once however many workers recover at the same moment.
* A worker that was only stopped (SIGSTOP, a frozen VM) wakes up believing it still plays its
  games. :func:`watch_leases` notices within one heartbeat that its jobs were handed on, stops
  its games (their bots die with them) and ends the process (exit code
  :data:`LEASE_LOST_EXIT`) so that its queue library cannot mark the other worker's job done.
  A result it reaches first is refused anyway by the lease guard (:mod:`.job`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

import psycopg
from procrastinate import App
from procrastinate.exceptions import ProcrastinateException
from procrastinate.jobs import Status
from psycopg.rows import TupleRow

from referee.storage import PairingInfo
from referee.telemetry import metrics
from referee.telemetry.logs import flush as flush_logs
from referee.telemetry.logs import get_logger
from referee.tournament.aborts import gives_up, record_given_up
from referee.tournament.gamespec import slot_seats
from referee.workers import TASK_NAME, steady
from referee.workers.job import LeaseLost, WorkerState, lease_guard
from referee.workers.queue import conninfo

log = get_logger("referee.workers.recovery")

#: A worker's exit code when it finds its games were handed to another worker (EX_TEMPFAIL:
#: a supervisor restarts it).
LEASE_LOST_EXIT = 75
#: Seconds a worker that lost its lease gives its games to stop their bots before exiting.
STOP_GRACE_S = 5.0


async def recover_stalled(
    app: App, state: WorkerState, url: str, stall_timeout_s: float
) -> list[tuple[int, str]]:
    """Hand on (or void, at the last attempt) the game jobs of silent workers; what was done
    to which job."""
    found = await app.job_manager.get_stalled_jobs(
        task_name=TASK_NAME, seconds_since_heartbeat=stall_timeout_s
    )
    # Never its own: a worker that runs this is alive, whatever its last heartbeat says (a
    # starved machine can delay one); if it is too late, the others hand its games on.
    stalled = [job for job in found if job.worker_id not in state.own_ids]
    if not stalled:
        return []
    done = []
    async with await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True) as conn:
        # A recoverer that is itself stopped mid-way must not hold a job's row for ever.
        await conn.execute("SET lock_timeout = '2s'")
        await conn.execute("SET idle_in_transaction_session_timeout = '10s'")
        for job in stalled:
            assert job.id is not None
            outcome = await _recover_one(conn, app, state, job, stall_timeout_s)
            if outcome:
                done.append((job.id, outcome))
    return done


async def _recover_one(
    conn: psycopg.AsyncConnection[TupleRow],
    app: App,
    state: WorkerState,
    job: Any,
    timeout_s: float,
) -> str:
    """``retried``, ``void``, or ``""`` when another worker got to the job first."""
    attempt = job.attempts + 1
    kwargs = job.task_kwargs
    # A ladder job has no pairing slot to void: its last attempt just fails.
    ladder = "pairing_id" not in kwargs
    pairing_id = None if ladder else int(kwargs["pairing_id"])
    index = None if ladder else int(kwargs["game_index"])
    reason = f"the worker playing it sent no heartbeat for {timeout_s:g} s"
    if not gives_up(attempt):
        async with conn.transaction():
            # Checked under the row's lock: several workers recover at once, and a job already
            # handed on (to a worker now playing it) must not be handed on twice.
            cur = await conn.execute(
                "SELECT status::text, worker_id FROM procrastinate_jobs WHERE id = %s FOR UPDATE",
                (job.id,),
            )
            if await cur.fetchone() != ("doing", job.worker_id):
                return ""
            # procrastinate's own retry (status todo, attempts + 1), in this transaction.
            await conn.execute(
                "SELECT procrastinate_retry_job_v2(%s, now(), NULL, NULL, NULL)", (job.id,)
            )
        outcome = "retried"
    else:
        if pairing_id is not None and index is not None:
            pairing = await asyncio.to_thread(state.repo.get_pairing, pairing_id)
            why = f"attempt {attempt}: {reason}"
            try:
                await asyncio.to_thread(
                    _void, state, int(kwargs["tournament_id"]), pairing, index, job, why, attempt
                )
            except LeaseLost:
                return ""
        with contextlib.suppress(psycopg.Error, ProcrastinateException):
            await app.job_manager.finish_job_by_id_async(
                job.id, status=Status.FAILED, delete_job=False
            )
        outcome = "void"
    log.warning(
        "game_stalled",
        job_id=job.id,
        stalled_worker=job.worker_id,
        pairing_id=pairing_id,
        game_index=index,
        attempt=attempt,
        outcome=outcome,
    )
    return outcome


def _void(
    state: WorkerState,
    tournament_id: int,
    pairing: PairingInfo,
    index: int,
    job: Any,
    why: str,
    attempts: int,
) -> None:
    plan = state.plan(tournament_id)
    seats = slot_seats(plan.versions, pairing, index)
    guard = lease_guard(job.id, job.worker_id)
    record_given_up(state.repo, plan.info, plan.game, pairing, index, seats, why, attempts, guard)


async def recovery_loop(
    app: App, state: WorkerState, url: str, every_s: float, stall_timeout_s: float
) -> None:
    """:func:`recover_stalled` every ``every_s`` seconds until cancelled.

    After this worker could not reach the database, it hands nothing on for one stall
    timeout: the other workers lost the database too (a restart, a cut link to its host)
    and missed their heartbeats for the same reason; they get a full lease to send one
    again before they are taken for dead."""
    quiet_until = 0.0
    #: When the database answered again after this worker's last failure (None: not yet).
    back_at: float | None = 0.0
    while True:
        # This worker's heartbeat, fetch or listener failed lately: so did the others'.
        if steady.last_failure[0] > (back_at or 0.0):
            back_at = None
        try:
            if back_at is not None and time.monotonic() >= quiet_until:
                await recover_stalled(app, state, url, stall_timeout_s)
            else:
                await app.job_manager.get_stalled_jobs(
                    task_name=TASK_NAME, seconds_since_heartbeat=stall_timeout_s
                )
                if back_at is None:
                    # The others get a full lease from now to send a heartbeat again.
                    back_at = time.monotonic()
                    quiet_until = back_at + stall_timeout_s + every_s
        except (psycopg.Error, OSError, ProcrastinateException) as exc:
            if back_at is not None and time.monotonic() >= quiet_until:
                log.warning("recovery_failed", reason=str(exc))
            back_at = None
            steady.last_failure[0] = time.monotonic()
            metrics.database_reachable("recovery", False)
        else:
            metrics.database_reachable("recovery", True)
        await asyncio.sleep(every_s)


async def lost_jobs(conn: psycopg.AsyncConnection[TupleRow], state: WorkerState) -> list[int]:
    """The jobs this worker plays that are no longer ``doing`` under the worker id it took
    them with."""
    running = dict(state.running)
    if not running:
        return []
    cur = await conn.execute(
        "SELECT id, status::text, worker_id FROM procrastinate_jobs WHERE id = ANY(%s)",
        (list(running),),
    )
    rows = {int(i): (s, w) for i, s, w in await cur.fetchall()}
    return [
        job_id
        for job_id, (worker_id, _task) in running.items()
        if rows.get(job_id, ("gone", None)) != ("doing", worker_id)
        and job_id in state.running  # not finished meanwhile
    ]


async def watch_leases(state: WorkerState, url: str, every_s: float) -> None:
    """Every ``every_s``: if a game of this worker was handed on, stop them all and exit.
    A lost connection is opened again (a restarted or unreachable database)."""
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(
                conninfo(url), autocommit=True
            ) as conn:
                while True:
                    await asyncio.sleep(every_s)
                    lost = await lost_jobs(conn, state)
                    metrics.database_reachable("leases", True)
                    if lost:
                        await abandon(state, f"jobs {lost} were handed to another worker")
        except (psycopg.Error, OSError) as exc:
            log.warning("lease_watch_failed", reason=str(exc))
            metrics.database_reachable("leases", False)
            await asyncio.sleep(every_s)


async def abandon(state: WorkerState, why: str) -> None:
    """Stop every game of this worker (their bots stop with them) and end the process."""
    if state.abandoning:
        return
    state.abandoning = True
    log.error("lease_lost", reason=why, games=len(state.running))
    tasks = [task for _worker, task in state.running.values()]
    for task in tasks:
        task.cancel()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(STOP_GRACE_S):
            await asyncio.gather(*tasks, return_exceptions=True)
    flush_logs()  # os._exit runs no exit handler: the log writer's queue is written first
    os._exit(LEASE_LOST_EXIT)
