"""A worker's warm sandboxes, sized by the queue: none while no game job waits.

Every few seconds the worker counts the waiting jobs of both its queues (the same query as its
queue metrics) and keeps two warm sandboxes (:mod:`referee.sandbox.warm`) per game it could
start next: at most its slots (``games_at_once`` and the one kept for first checks), at most
the jobs waiting. Empty queues empty the pool.
"""

from __future__ import annotations

import asyncio

import psycopg
from psycopg.rows import TupleRow

from referee.sandbox import warm
from referee.sandbox.isolation import Isolation
from referee.telemetry.logs import get_logger
from referee.workers.queue import conninfo
from referee.workers.queue_metrics import sample_all

log = get_logger("referee.workers.warmup")

#: Seconds between two looks at the queue.
LOOK_EVERY_S = 2.0


async def keep_warm(
    url: str, slots: int, isolation: Isolation, every_s: float = LOOK_EVERY_S
) -> None:
    """Until cancelled, keep the pool sized by the waiting jobs (the launches' terms are
    learnt from the first game's)."""
    async with warm.demand(0, None, isolation) as need:
        if need is None:
            return
        conn: psycopg.AsyncConnection[TupleRow] | None = None
        try:
            while True:
                try:
                    if conn is None or conn.closed:
                        conn = await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True)
                    waiting = await sample_all(conn)
                except psycopg.Error as exc:
                    log.warning("warm_pool_sample_failed", reason=str(exc).splitlines()[0])
                    conn, waiting = None, 0
                need.resize(2 * min(slots, waiting))
                await asyncio.sleep(every_s)
        finally:
            if conn is not None:
                await conn.close()
