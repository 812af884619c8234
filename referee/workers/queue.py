"""The job queue itself: a procrastinate app on the arena's PostgreSQL database.

The queue's tables live in the same database as the games (procrastinate's own schema, made
on first use by :func:`ensure_schema` under an advisory lock, so a server and many workers
starting at once make it once). A job is one game slot: ``(tournament, pairing, game index)``,
with the procrastinate ``lock`` :func:`slot_lock` so that two jobs of one slot never run at
the same time.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Sequence

import psycopg
from procrastinate import App, PsycopgConnector
from procrastinate.schema import SchemaManager
from psycopg.rows import TupleRow
from sqlalchemy.engine import make_url

from referee.storage.db import DEAD_LINK_ARGS
from referee.workers import TASK_NAME

#: Any constant: serialises "make the queue schema" across processes.
_SCHEMA_LOCK = 0x7E7A_0002
#: Job statuses after which nothing more happens to a job.
FINAL = frozenset({"succeeded", "failed", "cancelled", "aborted"})


def is_postgres(url: str | None) -> bool:
    """Whether ``url`` is a PostgreSQL URL (the only database the queue runs on)."""
    if not url or "://" not in url:
        return False
    return make_url(url).get_backend_name() == "postgresql"


def conninfo(url: str) -> str:
    """The libpq form of a SQLAlchemy URL (``postgresql+psycopg://`` -> ``postgresql://``),
    with the storage's dead-link bounds unless the URL sets its own."""
    if not is_postgres(url):
        raise ValueError(f"the job queue needs a PostgreSQL database, not {url!r}")
    parsed = make_url(url).set(drivername="postgresql")
    missing = {k: v for k, v in DEAD_LINK_ARGS.items() if k not in parsed.query}
    return parsed.update_query_dict(missing).render_as_string(hide_password=False)


def with_idle_timeout(url: str, seconds: float) -> str:
    """``url`` whose sessions end a transaction left idle for ``seconds`` (a stopped worker
    must not hold the rows of a game it was recording for ever)."""
    parsed = make_url(url)
    if "options" in parsed.query:
        return url
    option = f"-c idle_in_transaction_session_timeout={int(seconds * 1000)}"
    return parsed.update_query_dict({"options": option}).render_as_string(hide_password=False)


def make_app(url: str, *, pool_size: int = 4) -> App:
    """A procrastinate app on ``url`` (open it with ``async with opened(app)``)."""
    connector = PsycopgConnector(conninfo=conninfo(url), min_size=1, max_size=pool_size)
    return App(connector=connector)


@contextlib.asynccontextmanager
async def opened(app: App) -> AsyncIterator[App]:
    """``app`` open for the block and closed after it, also when opening it fails or is
    cancelled half-way (procrastinate's own ``async with app.open_async()`` closes nothing
    then). A pool left open outlives every cancellation: psycopg's async pool counts a
    cancelled task as a failed connection and tries again, so the event loop never ends."""
    try:
        await app.open_async()
        yield app
    finally:
        await app.close_async()


def slot_lock(pairing_id: int, game_index: int) -> str:
    return f"arena-game-{pairing_id}-{game_index}"


async def ensure_schema(url: str) -> bool:
    """Make procrastinate's tables if the database has none yet; whether it made them."""
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        cur = await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")
        row = await cur.fetchone()
        if row is not None and row[0]:
            return False
        await conn.execute(SchemaManager.get_schema())
        return True


async def job_states(conn: psycopg.AsyncConnection[TupleRow], ids: Sequence[int]) -> dict[int, str]:
    """The status of each job in ``ids`` (jobs no longer stored are left out)."""
    cur = await conn.execute(
        "SELECT id, status::text FROM procrastinate_jobs WHERE id = ANY(%s)", (list(ids),)
    )
    return {int(i): str(s) for i, s in await cur.fetchall()}


async def active_job(
    conn: psycopg.AsyncConnection[TupleRow], pairing_id: int, index: int
) -> int | None:
    """A job of this slot that is waiting or running (left by an earlier runner), if any."""
    cur = await conn.execute(
        "SELECT id FROM procrastinate_jobs WHERE task_name = %s AND lock = %s "
        "AND status IN ('todo', 'doing') ORDER BY id LIMIT 1",
        (TASK_NAME, slot_lock(pairing_id, index)),
    )
    row = await cur.fetchone()
    return None if row is None else int(row[0])


async def active_job_of(
    conn: psycopg.AsyncConnection[TupleRow], lock: str, match: dict[str, str]
) -> int | None:
    """A job under ``lock`` waiting or running whose arguments hold ``match``, if any."""
    cur = await conn.execute(
        "SELECT id FROM procrastinate_jobs WHERE task_name = %s AND lock = %s "
        "AND status IN ('todo', 'doing') AND args @> %s::jsonb ORDER BY id LIMIT 1",
        (TASK_NAME, lock, json.dumps(match)),
    )
    row = await cur.fetchone()
    return None if row is None else int(row[0])


async def active_jobs_with(
    conn: psycopg.AsyncConnection[TupleRow], key: str
) -> list[tuple[int, dict[str, object], str]]:
    """Every job waiting or running whose arguments name ``key``: its id, arguments and
    status (``todo`` or ``doing``), oldest first."""
    cur = await conn.execute(
        "SELECT id, args, status::text FROM procrastinate_jobs WHERE task_name = %s "
        "AND status IN ('todo', 'doing') AND args ? %s ORDER BY id",
        (TASK_NAME, key),
    )
    return [(int(i), dict(a), str(s)) for i, a, s in await cur.fetchall()]


async def cancel_waiting(conn: psycopg.AsyncConnection[TupleRow], job_id: int) -> bool:
    """Cancel job ``job_id`` if it still waits; whether it did (a job a worker took in the
    meantime is left to it: ending it would end its worker, :func:`~referee.workers.recovery
    .watch_leases`)."""
    cur = await conn.execute("SELECT procrastinate_cancel_job_v1(%s, false, false)", (job_id,))
    row = await cur.fetchone()
    return row is not None and row[0] is not None


async def live_workers(conn: psycopg.AsyncConnection[TupleRow], within_s: float) -> int:
    """How many workers sent a heartbeat in the last ``within_s`` seconds."""
    cur = await conn.execute(
        "SELECT count(*) FROM procrastinate_workers "
        "WHERE last_heartbeat > now() - make_interval(secs => %s)",
        (within_s,),
    )
    row = await cur.fetchone()
    return 0 if row is None else int(row[0])


async def take_back(conn: psycopg.AsyncConnection[TupleRow], job_id: int, within_s: float) -> str:
    """End job ``job_id`` so that no worker runs or records it, when no worker sent a
    heartbeat in the last ``within_s`` seconds (checked under the job row's lock, which a
    worker fetching or recording the job also takes): a waiting job is ``cancelled``, a
    running one (its worker silent) ``aborted``, and its lease guard refuses the late result.
    The status the job had, or ``""`` when it was left alone (a worker is alive, or the job
    already ended)."""
    async with conn.transaction():
        cur = await conn.execute(
            "SELECT status::text FROM procrastinate_jobs WHERE id = %s FOR UPDATE", (job_id,)
        )
        row = await cur.fetchone()
        if row is None or row[0] not in ("todo", "doing"):
            return ""
        if await live_workers(conn, within_s) > 0:
            return ""
        if row[0] == "todo":
            await conn.execute("SELECT procrastinate_cancel_job_v1(%s, false, false)", (job_id,))
        else:
            await conn.execute(
                "SELECT procrastinate_finish_job_v1(%s, 'aborted', false)", (job_id,)
            )
        return str(row[0])
