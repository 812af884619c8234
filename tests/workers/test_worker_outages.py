"""A worker's heartbeat across a database restart: sent again within a beat of the database's
return, not whenever the job pool's backed-off reconnection gets there."""

from __future__ import annotations

import asyncio
import contextlib

import psycopg
import pytest
from sqlalchemy.engine import make_url

from referee.workers.queue import conninfo, ensure_schema, make_app, opened
from referee.workers.steady import ride_out_outages

pytestmark = pytest.mark.slow

#: Long enough for the job pool's back-off (1, 2, 4, 8 s between attempts, the first +-10 %)
#: to miss the return by seconds: its attempt about 7 s in fails, the next is 13.5-16.5 s in.
OUTAGE_S = 9.0
BEAT_S = 0.25
#: A heartbeat lands this soon after the database is back (a few beats on a loaded machine;
#: the lease other workers give after an outage is a whole stall timeout).
BACK_WITHIN_S = 3.0


class Restartable:
    """A TCP proxy to PostgreSQL that can go away as a restarted server does: every
    connection closed, new ones refused, until it listens again on the same port."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.links):
            writer.transport.abort()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.links |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self.links -= {writer, up_writer}


async def _last_beat(url: str, worker_id: int) -> float:
    """The worker's last heartbeat as the database's epoch seconds (read directly)."""
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        cur = await conn.execute(
            "SELECT extract(epoch FROM last_heartbeat)::float FROM procrastinate_workers "
            "WHERE id = %s",
            (worker_id,),
        )
        row = await cur.fetchone()
    assert row is not None
    return float(row[0])


async def _db_now(url: str) -> float:
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        row = await (await conn.execute("SELECT extract(epoch FROM now())::float")).fetchone()
    assert row is not None
    return float(row[0])


async def _restart_under_heartbeats(url: str) -> float:
    """Seconds from the database's return to the worker's next stored heartbeat."""
    await ensure_schema(url)
    parsed = make_url(url)
    proxy = Restartable(parsed.host or "127.0.0.1", parsed.port or 5432)
    await proxy.up()
    proxied = parsed.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    app = make_app(proxied)
    ride_out_outages(app, proxied)
    async with opened(app):
        manager = app.job_manager
        worker_id = await manager.register_worker()

        async def beat() -> None:
            # procrastinate's heartbeat task, with the interval of the tests' workers.
            while True:
                await asyncio.sleep(BEAT_S)
                await manager.update_heartbeat(worker_id)

        async def fetch() -> None:
            # The job pool used meanwhile, as a worker's fetch loop uses it.
            while True:
                await asyncio.sleep(BEAT_S)
                await manager.fetch_job(queues=None, worker_id=worker_id)

        beats = asyncio.gather(beat(), fetch())
        try:
            await proxy.down()
            await asyncio.sleep(OUTAGE_S)  # not a wait: the restart's own length
            await proxy.up()
            back = await _db_now(url)
            async with asyncio.timeout(OUTAGE_S * 3):
                while (last := await _last_beat(url, worker_id)) <= back:
                    await asyncio.sleep(0.05)
            return last - back
        finally:
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await beats
            await proxy.down()


def test_heartbeat_resumes_within_a_beat_of_a_database_restart(pg_url: str) -> None:
    """The database gone (connections closed, new ones refused) for OUTAGE_S while a worker
    beats: its next heartbeat is stored within a few beats of the return, so the lease the
    other workers give after an outage (one stall timeout) is never missed for this reason."""
    late = asyncio.run(_restart_under_heartbeats(pg_url))
    assert late < BACK_WITHIN_S, f"the first heartbeat came {late:.1f} s after the return"


def test_a_failed_attempt_waits_for_the_database_to_learn_whether_its_job_is_still_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After an attempt failed while its worker was cut from the database, the lease check is
    asked again until the database answers (a lost job then ends the worker by the lease rule)
    instead of raising the connection error, which made the queue library try to retry a job
    another worker had taken over."""
    from sqlalchemy.exc import OperationalError

    from referee.workers import job

    answers: list[BaseException | bool] = [
        OperationalError("SELECT", {}, Exception("no route to host")),
        OperationalError("SELECT", {}, Exception("connection timeout expired")),
        False,
    ]

    def lease_held(repo: object, job_id: int, worker_id: int | None) -> bool:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    monkeypatch.setattr(job, "lease_held", lease_held)
    monkeypatch.setattr(job, "LEASE_RETRY_S", 0.0)
    assert asyncio.run(job.lease_known(None, 7, 2)) is False  # type: ignore[arg-type]
    assert answers == []
