"""The runner's side of the queue: one job per game, then wait for the stored result.

:class:`QueueDispatcher` is the :class:`~referee.tournament.runner.GameQueue` a tournament
runner is given on PostgreSQL. The stored game, not the job's status, is the truth: a slot is
done when the games table holds a game in it. A job that ends without one (cut off by a
worker's shutdown, say) is enqueued again; a job that *failed* with the slot still empty is
given up on (the tournament pauses, as the in-process runner does). A slot whose job is
already waiting or running (left by a runner that stopped) is waited for, not enqueued twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from referee.storage import GameSummary, Repository
from referee.telemetry import metrics
from referee.telemetry.logs import get_logger
from referee.tournament.aborts import MAX_ATTEMPTS
from referee.workers import QUEUE, TASK_NAME
from referee.workers.queue import (
    FINAL,
    active_job,
    active_job_of,
    active_jobs_with,
    cancel_waiting,
    conninfo,
    ensure_schema,
    job_states,
    live_workers,
    make_app,
    opened,
    slot_lock,
    take_back,
)

log = get_logger("referee.workers.dispatch")

#: How often the states of the jobs waited for are read.
POLL_S = 0.2


class QueueDispatcher:
    """Enqueues games of a tournament on ``url``'s queue; use as ``async with``."""

    def __init__(self, repo: Repository, url: str, poll_s: float = POLL_S) -> None:
        self.repo = repo
        self.url = url
        self.poll_s = poll_s
        self.app = make_app(url, pool_size=2)
        self._conn: psycopg.AsyncConnection[TupleRow] | None = None
        self._waiting: dict[int, asyncio.Future[str]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._open = contextlib.AsyncExitStack()

    async def __aenter__(self) -> QueueDispatcher:
        # What is open is closed again if opening the rest fails or is cancelled.
        async with contextlib.AsyncExitStack() as stack:
            await ensure_schema(self.url)
            await stack.enter_async_context(opened(self.app))
            stack.push_async_callback(self._close_connection)
            await self._connection()
            self._poller = asyncio.create_task(self._poll(), name="queue-poller")
            stack.push_async_callback(_stop, self._poller)
            self._open = stack.pop_all()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._open.aclose()

    async def _connection(self) -> psycopg.AsyncConnection[TupleRow]:
        """The dispatcher's connection, opened again when the database dropped it (restarted,
        or cut off past the dead-link bounds)."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    await self._conn.close()
                self._conn = None
            self._conn = await psycopg.AsyncConnection.connect(conninfo(self.url), autocommit=True)
        return self._conn

    async def _close_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                await self._conn.close()
            self._conn = None

    async def enqueue(self, tournament_id: int, pairing_id: int, game_index: int) -> int:
        """The id of a job for this slot: one already waiting or running, else a new one."""
        found = await active_job(await self._connection(), pairing_id, game_index)
        if found is not None:
            return found
        deferrer = self.app.configure_task(
            TASK_NAME, queue=QUEUE, lock=slot_lock(pairing_id, game_index)
        )
        job_id = await deferrer.defer_async(
            tournament_id=tournament_id, pairing_id=pairing_id, game_index=game_index
        )
        log.debug("game_enqueued", job_id=job_id, pairing_id=pairing_id, game_index=game_index)
        return job_id

    async def enqueue_ladder(self, kwargs: dict[str, Any]) -> int:
        """A job for one ladder game (:func:`~referee.workers.ladderjob.ladder_job_kwargs`);
        its uid is also its lock, so two jobs of one game never run at once."""
        deferrer = self.app.configure_task(
            TASK_NAME, queue=QUEUE, lock=f"arena-ladder-{kwargs['ladder_uid']}"
        )
        job_id = await deferrer.defer_async(**kwargs)
        log.debug("ladder_game_enqueued", job_id=job_id, game_id=kwargs["ladder_uid"])
        return job_id

    async def enqueue_keyed(
        self,
        kwargs: dict[str, Any],
        lock: str,
        *,
        priority: int = 0,
        match: dict[str, str],
        queue: str = QUEUE,
    ) -> int:
        """A job of ``kwargs`` under ``lock`` on ``queue``: one of that lock already waiting or
        running whose arguments hold ``match`` (left by a server that stopped, on any queue),
        else a new one."""
        found = await active_job_of(await self._connection(), lock, match)
        if found is not None:
            return found
        deferrer = self.app.configure_task(TASK_NAME, queue=queue, lock=lock, priority=priority)
        job_id = await deferrer.defer_async(**kwargs)
        log.debug("job_enqueued", job_id=job_id, lock=lock)
        return job_id

    async def active_jobs_with(self, key: str) -> list[tuple[int, dict[str, object], str]]:
        """Jobs waiting or running whose arguments name ``key`` (id, arguments, status)."""
        return await active_jobs_with(await self._connection(), key)

    async def cancel_waiting(self, job_id: int) -> bool:
        """Cancel job ``job_id`` if it still waits; whether it did."""
        return await cancel_waiting(await self._connection(), job_id)

    async def live_workers(self, within_s: float) -> int:
        """How many workers sent a heartbeat in the last ``within_s`` seconds."""
        return await live_workers(await self._connection(), within_s)

    async def take_back(self, job_id: int, within_s: float) -> str:
        """End job ``job_id`` unrun when no worker sent a heartbeat in the last ``within_s``
        seconds (:func:`~referee.workers.queue.take_back`); the status it had, or ``""``."""
        return await take_back(await self._connection(), job_id, within_s)

    async def play(
        self, tournament_id: int, pairing_id: int, game_index: int
    ) -> GameSummary | None:
        """Have the slot played by a worker; its stored game, ``None`` when given up."""
        for _ in range(MAX_ATTEMPTS):
            stored = await self.stored(pairing_id, game_index)
            if stored is not None:
                return stored
            job_id = await self.enqueue(tournament_id, pairing_id, game_index)
            status = await self.wait(job_id)
            stored = await self.stored(pairing_id, game_index)
            if stored is not None:
                return stored
            log.warning("job_ended_without_game", job_id=job_id, status=status)
            if status == "failed":
                return None
        return None

    async def stored(self, pairing_id: int, game_index: int) -> GameSummary | None:
        games = await asyncio.to_thread(self.repo.list_games, pairing_id=pairing_id, limit=None)
        return next((g for g in games if g.counted and g.game_index == game_index), None)

    async def wait(self, job_id: int) -> str:
        """The final status of job ``job_id`` once it has one."""
        fut = self._waiting.get(job_id)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._waiting[job_id] = fut
        return await asyncio.shield(fut)

    async def _poll(self) -> None:
        failing = False
        while True:
            await asyncio.sleep(self.poll_s)
            ids = [i for i, f in self._waiting.items() if not f.done()]
            if not ids:
                continue
            try:
                states = await job_states(await self._connection(), ids)
            except psycopg.Error as exc:
                # Once per outage, not every poll; the next poll connects again.
                if not failing:
                    log.warning("queue_poll_failed", reason=str(exc))
                failing = True
                metrics.database_reachable("queue_poll", False)
                continue
            if failing:
                log.info("queue_poll_recovered")
                failing = False
            metrics.database_reachable("queue_poll", True)
            for job_id in ids:
                status = states.get(job_id, "gone")
                if status in FINAL or status == "gone":
                    self._waiting.pop(job_id).set_result(status)


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
