"""``referee worker``: a process that takes game jobs from the queue and plays them.

A worker plays up to ``concurrency`` games at once (default: one per core), each with both
bots launched in the sandbox on this machine, and keeps :data:`~referee.workers
.FIRST_CHECK_SLOTS` more slots for uploads' first checks: its general procrastinate worker
takes jobs from both queues (the highest priority first), and a second one takes only first
checks, so a first check starts at once even while every general slot plays a long game
(:mod:`.slots` runs both as one). It sends a heartbeat every ``heartbeat_s`` (each of its two
procrastinate workers does); the workers together hand on the games of any worker silent for
``stall_timeout_s`` (:mod:`.recovery`). SIGTERM/SIGINT stop taking jobs and let running games
finish (for up to ``shutdown_grace_s``; games cut off then are played again by another
worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from procrastinate import App, JobContext, RetryStrategy
from structlog.contextvars import bound_contextvars

from referee.sandbox.isolation import choose
from referee.storage import Repository
from referee.telemetry import metrics
from referee.telemetry.logs import get_logger
from referee.tournament.aborts import MAX_ATTEMPTS
from referee.workers import (
    FIRST_CHECK_QUEUE,
    FIRST_CHECK_SLOTS,
    HEARTBEAT_S,
    QUEUE,
    QUEUES,
    STALL_TIMEOUT_S,
    TASK_NAME,
)
from referee.workers.job import GameFailed, LeaseLost, WorkerState, play_job
from referee.workers.ladderjob import LADDER_KEY, play_ladder_job
from referee.workers.live import LivePublisher
from referee.workers.queue import ensure_schema, make_app, opened, with_idle_timeout
from referee.workers.recovery import abandon, recovery_loop, watch_leases
from referee.workers.slots import run_together
from referee.workers.steady import ride_out_outages
from referee.workers.validationjob import VALIDATION_KEY, play_validation_job
from referee.workers.warmup import keep_warm

log = get_logger("referee.workers.worker")

#: One kind of job: (state, job id, worker id, failed attempts, kwargs) -> its outcome.
Play = Callable[[WorkerState, int, "int | None", int, dict[str, Any]], Coroutine[Any, Any, str]]


@dataclass(slots=True)
class WorkerOptions:
    url: str
    concurrency: int = 0
    heartbeat_s: float = HEARTBEAT_S
    stall_timeout_s: float = STALL_TIMEOUT_S
    shutdown_grace_s: float = 60.0
    no_sandbox: bool = False
    allow_unsandboxed_uploads: bool = False
    name: str = ""
    #: Publish live moves for the server's spectators.
    live: bool = True

    @property
    def games_at_once(self) -> int:
        """The general slots (any job)."""
        return max(1, self.concurrency or os.cpu_count() or 1)

    @property
    def slots(self) -> int:
        """Every slot: the general ones and those kept for first checks."""
        return self.games_at_once + FIRST_CHECK_SLOTS


def register_task(app: App, state: WorkerState) -> None:
    """The game task on ``app``, playing with ``state``."""

    @app.task(
        name=TASK_NAME,
        queue=QUEUE,
        pass_context=True,
        # Failures past the last attempt are recorded void by play_job, not failed here.
        retry=RetryStrategy(max_attempts=MAX_ATTEMPTS),
    )
    async def play_game(context: JobContext, /, **kwargs: Any) -> str:
        job = context.job
        assert job.id is not None
        if job.worker_id is not None:
            state.own_ids.add(job.worker_id)
        # The game runs on a task of its own: a worker that lost its lease stops the game
        # without this task ever returning, so the queue never marks a handed-on job done.
        play = _job_kind(kwargs)
        inner = asyncio.create_task(play(state, job.id, job.worker_id, job.attempts, kwargs))
        state.running[job.id] = (job.worker_id, inner)
        try:
            await asyncio.wait({inner})
        except asyncio.CancelledError:
            inner.cancel()
            await asyncio.wait({inner})
            raise
        finally:
            state.running.pop(job.id, None)
        if state.abandoning:
            await asyncio.Event().wait()  # the process is exiting
        if not inner.cancelled() and isinstance(inner.exception(), LeaseLost):
            await abandon(state, str(inner.exception()))
        metrics.job_finished(job.queue, job_outcome(inner))
        return inner.result()


def _job_kind(kwargs: dict[str, Any]) -> Play:
    """What plays a job: a tournament's game, a ladder (or grading) game, a validation."""
    if VALIDATION_KEY in kwargs:
        return play_validation_job
    return play_ladder_job if LADDER_KEY in kwargs else play_job


#: play_job's outcomes, as the words of tetromino_jobs_finished_total{outcome}.
_OUTCOMES = {
    "recorded": "recorded",
    "void": "void",
    "already recorded": "already_recorded",
    # A validation no worker could run contained: the version stays validating.
    "postponed": "void",
}


def job_outcome(game: asyncio.Task[str]) -> str:
    """How a game job's attempt ended, in a bounded vocabulary for the metrics: ``recorded``,
    ``void``, ``already_recorded``, ``retried`` (it failed and the queue tries again),
    ``handed_on`` (this worker lost the job), ``cancelled`` or ``failed``."""
    if game.cancelled():
        return "cancelled"
    error = game.exception()
    if error is None:
        return _OUTCOMES.get(game.result(), "failed")
    if isinstance(error, LeaseLost):
        return "handed_on"
    return "retried" if isinstance(error, GameFailed) else "failed"


async def run_worker(options: WorkerOptions) -> int:
    """Take and play game jobs until SIGTERM/SIGINT; the exit code."""
    name = options.name or f"{socket.gethostname()}-{os.getpid()}"
    with bound_contextvars(worker=name):
        await ensure_schema(options.url)
        url = with_idle_timeout(options.url, options.stall_timeout_s)
        repo = await asyncio.to_thread(Repository.open, url)
        publisher = LivePublisher(options.url) if options.live else None
        state = WorkerState(
            repo,
            no_sandbox=options.no_sandbox,
            publisher=publisher,
            allow_unsandboxed_uploads=options.allow_unsandboxed_uploads,
        )
        # A connection per running job's end, and per procrastinate worker its fetch and
        # abort poll; one for recovery.
        app = make_app(options.url, pool_size=options.slots + 5)
        ride_out_outages(app, options.url)
        register_task(app, state)
        sides: list[asyncio.Task[None]] = []
        try:
            if publisher is not None:
                await publisher.start()
            async with opened(app):
                every = options.heartbeat_s
                sides.append(
                    asyncio.create_task(
                        recovery_loop(app, state, options.url, every, options.stall_timeout_s)
                    )
                )
                sides.append(asyncio.create_task(watch_leases(state, options.url, every)))
                state.isolation = state.isolation or choose(options.no_sandbox)
                warmup = keep_warm(options.url, options.slots, state.isolation)
                sides.append(asyncio.create_task(warmup))
                log.info(
                    "worker_started",
                    games_at_once=options.games_at_once,
                    first_check_slots=FIRST_CHECK_SLOTS,
                )
                await run_together(_procrastinate_workers(app, options, name))
        finally:
            for task in sides:
                task.cancel()
            for task in sides:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if publisher is not None:
                await publisher.close()
            repo.close()
        log.info("worker_stopped")
        return 0


def _procrastinate_workers(
    app: App, options: WorkerOptions, name: str
) -> list[Callable[[], Awaitable[None]]]:
    """This process's procrastinate workers: the general one (both queues, ``games_at_once``
    slots) and the first checks' (their queue only, :data:`FIRST_CHECK_SLOTS` slots)."""
    return [
        _procrastinate_worker(app, options, name, QUEUES, options.games_at_once),
        _procrastinate_worker(
            app, options, f"{name}/first-checks", [FIRST_CHECK_QUEUE], FIRST_CHECK_SLOTS
        ),
    ]


def _procrastinate_worker(
    app: App, options: WorkerOptions, name: str, queues: Sequence[str], concurrency: int
) -> Callable[[], Awaitable[None]]:
    """One procrastinate worker of this process, on ``queues`` with ``concurrency`` slots (the
    signals are :func:`run_together`'s, for both)."""

    def run() -> Awaitable[None]:
        return app.run_worker_async(
            queues=list(queues),
            name=name,
            concurrency=concurrency,
            update_heartbeat_interval=options.heartbeat_s,
            stalled_worker_timeout=options.stall_timeout_s,
            # Jobs handed back by recovery are not announced: poll for them.
            fetch_job_polling_interval=min(1.0, options.heartbeat_s),
            shutdown_graceful_timeout=options.shutdown_grace_s,
            install_signal_handlers=False,
        )

    return run
