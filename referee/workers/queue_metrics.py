"""The job queue's depth and the age of its oldest waiting job, sampled into the metrics.

Every worker samples the queues (one small query each every few seconds) and exports
``tetromino_queue_depth`` and ``tetromino_oldest_job_age_seconds`` for each, labelled by queue:
``games`` (the games and full validations the worker pool is scaled on) and ``first_checks``
(the uploads' first checks, which each worker also serves with a slot of their own). They all
see the same queues, so a dashboard or the Helm chart's autoscaler takes the ``max`` across
them. A job
counts as waiting while it is ``todo`` and due (a retry scheduled for later is not yet
waiting); its age runs from when it was deferred, or from its scheduled time if later.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import psycopg
from psycopg.rows import TupleRow

from referee.telemetry import metrics
from referee.telemetry.logs import get_logger
from referee.workers import QUEUE, QUEUES
from referee.workers.queue import conninfo

log = get_logger("referee.workers.queue_metrics")

#: Seconds between two samples.
SAMPLE_EVERY_S = 5.0

_WAITING = """
SELECT count(*),
       coalesce(extract(epoch FROM now() - min(greatest(deferred.at, j.scheduled_at))), 0)
FROM procrastinate_jobs j
LEFT JOIN LATERAL (
    SELECT min(e.at) AS at FROM procrastinate_events e
    WHERE e.job_id = j.id AND e.type = 'deferred'
) deferred ON true
WHERE j.queue_name = %s AND j.status = 'todo'
  AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
"""


async def sample(conn: psycopg.AsyncConnection[TupleRow], queue: str = QUEUE) -> tuple[int, float]:
    """Count ``queue``'s waiting jobs and the oldest one's age in seconds, and export both."""
    cur = await conn.execute(_WAITING, (queue,))
    row = await cur.fetchone()
    depth, age = (int(row[0]), float(row[1] or 0.0)) if row is not None else (0, 0.0)
    metrics.set_queue_depth(queue, depth)
    metrics.set_oldest_job_age(queue, age)
    return depth, age


async def sample_all(
    conn: psycopg.AsyncConnection[TupleRow], queues: Sequence[str] = QUEUES
) -> int:
    """:func:`sample` each of ``queues``; their waiting jobs together."""
    return sum([(await sample(conn, queue))[0] for queue in queues])


async def sample_forever(
    url: str, every_s: float = SAMPLE_EVERY_S, queues: Sequence[str] = QUEUES
) -> None:
    """Sample ``queues`` every ``every_s`` seconds until cancelled; a failed sample (the
    database restarting) is logged and the connection made again on the next round."""
    conn: psycopg.AsyncConnection[TupleRow] | None = None
    try:
        while True:
            try:
                if conn is None or conn.closed:
                    conn = await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True)
                await sample_all(conn, queues)
            except psycopg.Error as exc:
                log.warning("queue_sample_failed", reason=str(exc).splitlines()[0])
                if conn is not None:
                    await conn.close()
                conn = None
            await asyncio.sleep(every_s)
    finally:
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                await conn.close()
