"""The queue gauges on the real PostgreSQL: waiting game jobs are counted and the oldest one's
age exported, jobs scheduled for later or already taken are not waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager

import psycopg
import pytest

from referee.telemetry.metrics import REGISTRY
from referee.workers import FIRST_CHECK_QUEUE, QUEUE, TASK_NAME
from referee.workers.queue import conninfo, ensure_schema, make_app
from referee.workers.queue_metrics import sample, sample_all


async def _scenario(url: str) -> tuple[tuple[int, float], tuple[int, float], tuple[int, float]]:
    await ensure_schema(url)
    app = make_app(url)
    async with (
        app.open_async(),
        await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True) as conn,
    ):
        empty = await sample(conn)
        task = app.configure_task(TASK_NAME, queue=QUEUE)
        ids = [
            await task.defer_async(tournament_id=1, pairing_id=i, game_index=0) for i in range(3)
        ]
        later = app.configure_task(TASK_NAME, queue=QUEUE, schedule_in={"hours": 1})
        await later.defer_async(tournament_id=1, pairing_id=9, game_index=0)
        # The first job was deferred a minute ago; one job is being played.
        await conn.execute(
            "UPDATE procrastinate_events SET at = now() - interval '60 seconds' "
            "WHERE job_id = %s AND type = 'deferred'",
            (ids[0],),
        )
        await conn.execute(
            "UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s", (ids[2],)
        )
        waiting = await sample(conn)
        other = await sample(conn, "another-queue")
    return empty, waiting, other


@pytest.mark.postgres
def test_waiting_jobs_and_the_oldest_age_are_exported(
    throwaway_postgres: Callable[[], AbstractContextManager[str]],
) -> None:
    """An empty queue reads 0 and 0 s; with two due jobs (one deferred a minute ago), one
    scheduled in an hour and one being played, the depth is 2 and the age about 60 s; the
    gauges say the same, labelled by queue."""
    with throwaway_postgres() as url:
        empty, waiting, other = asyncio.run(_scenario(url))
    assert empty == (0, 0.0)
    depth, age = waiting
    assert depth == 2
    assert 59 <= age < 600
    assert other == (0, 0.0)
    labels = {"queue": QUEUE}
    assert REGISTRY.get_sample_value("tetromino_queue_depth", labels) == 2
    assert REGISTRY.get_sample_value("tetromino_oldest_job_age_seconds", labels) == age


async def _both_queues(url: str) -> tuple[int, tuple[int, float]]:
    await ensure_schema(url)
    app = make_app(url)
    async with (
        app.open_async(),
        await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True) as conn,
    ):
        games = app.configure_task(TASK_NAME, queue=QUEUE)
        checks = app.configure_task(TASK_NAME, queue=FIRST_CHECK_QUEUE, priority=20)
        await games.defer_async(tournament_id=1, pairing_id=1, game_index=0)
        for sid in (1, 2):
            await checks.defer_async(validation_submission_id=sid, step="first")
        return await sample_all(conn), await sample(conn, FIRST_CHECK_QUEUE)


@pytest.mark.postgres
def test_both_queues_are_sampled_each_under_its_own_label(
    throwaway_postgres: Callable[[], AbstractContextManager[str]],
) -> None:
    """One game and two first checks waiting: the worker's count (what its warm pool is sized
    by) is 3, and the first checks' queue is exported as its own series, of depth 2."""
    with throwaway_postgres() as url:
        total, (checks, _) = asyncio.run(_both_queues(url))
    assert total == 3 and checks == 2
    labels = {"queue": FIRST_CHECK_QUEUE}
    assert REGISTRY.get_sample_value("tetromino_queue_depth", labels) == 2
    assert REGISTRY.get_sample_value("tetromino_queue_depth", {"queue": QUEUE}) == 1
