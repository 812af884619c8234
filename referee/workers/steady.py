"""procrastinate's worker kept running through a database outage.

procrastinate stops a worker when one of its side tasks fails: a heartbeat that cannot be
written, the LISTEN connection that cannot be opened again, a job fetch that raises. A
PostgreSQL restart or a cut link to the database host does all three, and a worker that stops
sends no heartbeat while its games finish, so the other workers take it for dead and play its
games again. :func:`ride_out_outages` wraps those three calls of one app's job manager: a
failed heartbeat is skipped (the next one comes one interval later), a failed fetch finds no
job, and the listener connects again after a pause. Each failure is logged once per outage and
counted in ``tetromino_database_up{loop}``.

The heartbeat goes over a connection of its own, opened again at the first beat after a
failure: through the job pool it would wait for the pool's reconnection, which backs off
exponentially (1, 2, 4, 8 s...), so a worker could send its first heartbeat after a restart up
to an outage's length late, past the lease the other workers give it (:mod:`.recovery`), and
be taken for dead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from procrastinate import App, sql
from procrastinate.exceptions import ProcrastinateException
from psycopg.rows import TupleRow

from referee.telemetry import metrics
from referee.telemetry.logs import get_logger
from referee.workers.queue import conninfo

log = get_logger("referee.workers.steady")

#: Seconds between two attempts to LISTEN again.
RELISTEN_S = 1.0
_FAILURES = (psycopg.Error, ProcrastinateException, OSError)


#: When this process last failed to reach the database (monotonic seconds; recovery waits a
#: full lease after it before taking other workers for dead).
last_failure = [float("-inf")]


class _Outage:
    """One loop's state: logs the first failure of an outage and its end."""

    def __init__(self, loop: str) -> None:
        self.loop = loop
        self.failing = False

    def failed(self, exc: BaseException) -> None:
        last_failure[0] = time.monotonic()
        if not self.failing:
            log.warning("database_unreachable", loop=self.loop, reason=str(exc))
        self.failing = True
        metrics.database_reachable(self.loop, False)

    def ok(self) -> None:
        if self.failing:
            log.info("database_reachable", loop=self.loop)
        self.failing = False
        metrics.database_reachable(self.loop, True)


class _Heartbeat:
    """The heartbeats of an app's workers on one connection of their own to ``url`` (closed
    and opened again after any failure, without the pool's back-off), one beat at a time."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: psycopg.AsyncConnection[TupleRow] | None = None
        self.lock = asyncio.Lock()

    async def __call__(self, worker_id: int) -> None:
        async with self.lock:
            try:
                if self.conn is None or self.conn.closed:
                    self.conn = await psycopg.AsyncConnection.connect(
                        conninfo(self.url), autocommit=True
                    )
                query = sql.queries["update_heartbeat"]
                await self.conn.execute(query, {"worker_id": worker_id})
            except BaseException:
                if self.conn is not None:
                    await self.conn.close()
                    self.conn = None
                raise


def ride_out_outages(app: App, url: str) -> None:
    """Make ``app``'s worker, on the database ``url``, survive database outages (see the
    module's docstring)."""
    manager = app.job_manager
    beat = _Heartbeat(url)
    fetch = manager.fetch_job
    listen = manager.listen_for_jobs
    beats, fetches, listens = _Outage("heartbeat"), _Outage("fetch"), _Outage("listen")

    async def update_heartbeat(worker_id: int) -> None:
        try:
            await beat(worker_id)
        except _FAILURES as exc:
            beats.failed(exc)
        else:
            beats.ok()

    async def fetch_job(queues: Any, worker_id: int) -> Any:
        try:
            job = await fetch(queues=queues, worker_id=worker_id)
        except _FAILURES as exc:
            fetches.failed(exc)
            return None
        fetches.ok()
        return job

    async def listen_for_jobs(
        *, on_notification: Callable[..., Awaitable[None]], **kw: Any
    ) -> None:
        while True:
            try:
                await listen(on_notification=on_notification, **kw)
            except _FAILURES as exc:
                listens.failed(exc)
            await asyncio.sleep(RELISTEN_S)

    # Instance attributes shadow the methods for this app only.
    setattr(manager, "update_heartbeat", update_heartbeat)  # noqa: B010
    setattr(manager, "fetch_job", fetch_job)  # noqa: B010
    setattr(manager, "listen_for_jobs", listen_for_jobs)  # noqa: B010
