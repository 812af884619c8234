"""Recovering the games of silent workers, and the lease guard, on the real PostgreSQL and the
real queue (no processes: a silent worker is a heartbeat row an hour old)."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from workers_helpers import GREEDY, RANDOM, make_tournament

from engine.adjudication.verdicts import Verdict
from referee.storage import PairingInfo, Repository
from referee.tournament.aborts import record_given_up
from referee.tournament.gamespec import slot_seats, tournament_game
from referee.workers import QUEUE, TASK_NAME
from referee.workers.job import LeaseLost, WorkerState, lease_guard
from referee.workers.queue import conninfo, ensure_schema, make_app, slot_lock
from referee.workers.recovery import recover_stalled


async def _stalled_job(url: str, t_id: int, pairing: PairingInfo, index: int, attempts: int) -> int:
    """A game job ``doing`` on a worker whose last heartbeat is an hour old."""
    app = make_app(url)
    async with app.open_async():
        deferrer = app.configure_task(TASK_NAME, queue=QUEUE, lock=slot_lock(pairing.id, index))
        job_id = await deferrer.defer_async(
            tournament_id=t_id, pairing_id=pairing.id, game_index=index
        )
    async with await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True) as conn:
        cur = await conn.execute(
            "INSERT INTO procrastinate_workers (last_heartbeat) "
            "VALUES (now() - interval '1 hour') RETURNING id"
        )
        row = await cur.fetchone()
        assert row is not None
        await conn.execute(
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s, attempts = %s "
            "WHERE id = %s",
            (row[0], attempts, job_id),
        )
    return job_id


async def _job(url: str, job_id: int) -> tuple[Any, ...]:
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        cur = await conn.execute(
            "SELECT status::text, attempts FROM procrastinate_jobs WHERE id = %s", (job_id,)
        )
        row = await cur.fetchone()
        assert row is not None
        return tuple(row)


async def _recover(url: str, state: WorkerState) -> list[tuple[int, str]]:
    app = make_app(url)
    async with app.open_async():
        return await recover_stalled(app, state, url, 1.0)


def test_a_stalled_game_is_handed_on_and_its_third_failure_recorded_void(pg_url: str) -> None:
    """A silent worker's game goes back to the queue with one more attempt counted; at its
    third attempt it is recorded void (holding its slot) with the reason, exactly once."""
    repo = Repository.open(pg_url)
    t = make_tournament(repo, "stall", [RANDOM, GREEDY])
    a, b = (v.id for v in repo.tournament_entrants(t.id))
    (pairing,) = repo.add_pairings(t.id, 1, [(a, b)], games_per_pairing=2)
    state = WorkerState(repo, no_sandbox=True)
    asyncio.run(ensure_schema(pg_url))
    first = asyncio.run(_stalled_job(pg_url, t.id, pairing, 0, attempts=0))
    last = asyncio.run(_stalled_job(pg_url, t.id, pairing, 1, attempts=2))

    done = sorted(asyncio.run(_recover(pg_url, state)))
    assert done == [(first, "retried"), (last, "void")]
    assert asyncio.run(_job(pg_url, first)) == ("todo", 1)
    assert asyncio.run(_job(pg_url, last))[0] == "failed"
    (void,) = repo.list_games(pairing_id=pairing.id)
    assert void.game_index == 1 and void.counted and void.voided
    assert void.verdict is Verdict.ABORTED and void.result == "*"
    assert "attempt 3" in void.reason and "no heartbeat" in void.reason
    assert repo.get_pairing(pairing.id).finished_games == (1,)
    # Nothing is stalled any more: a second pass changes nothing.
    assert asyncio.run(_recover(pg_url, state)) == []
    assert len(repo.list_games(pairing_id=pairing.id)) == 1
    repo.close()


def test_the_lease_guard_refuses_the_result_of_a_handed_on_job(pg_url: str) -> None:
    """A result is stored only while its job is ``doing`` on the worker that writes it: a
    worker that lost the job (another worker id holds it) stores nothing."""
    repo = Repository.open(pg_url)
    t = make_tournament(repo, "lease", [RANDOM, GREEDY])
    a, b = (v.id for v in repo.tournament_entrants(t.id))
    (pairing,) = repo.add_pairings(t.id, 1, [(a, b)], games_per_pairing=1)
    asyncio.run(ensure_schema(pg_url))
    job_id = asyncio.run(_stalled_job(pg_url, t.id, pairing, 0, attempts=0))
    info = repo.get_tournament(t.id)
    versions = {v.id: v for v in repo.tournament_entrants(t.id)}
    seats = slot_seats(versions, pairing, 0)
    game = tournament_game(info)

    with pytest.raises(LeaseLost):
        record_given_up(repo, info, game, pairing, 0, seats, "test", guard=lease_guard(job_id, -1))
    assert repo.list_games(pairing_id=pairing.id) == []
    holder = asyncio.run(_holder(pg_url, job_id))
    stored = record_given_up(
        repo, info, game, pairing, 0, seats, "test", guard=lease_guard(job_id, holder)
    )
    assert stored is not None and stored.counted
    repo.close()


async def _holder(url: str, job_id: int) -> int:
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        query = "SELECT worker_id FROM procrastinate_jobs WHERE id = %s"
        cur = await conn.execute(query, (job_id,))
        row = await cur.fetchone()
        assert row is not None
        return int(row[0])
