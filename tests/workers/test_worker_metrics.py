"""A ``referee worker`` process's operations endpoints while it plays queued games: /metrics
counts its jobs, games, moves and bot launches, and its gRPC health service answers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families
from workers_helpers import GREEDY, RANDOM, REFEREE, ROOT, log_lines, make_tournament, stop_workers

from referee.storage import Repository
from referee.tournament.runner import TournamentRunner
from referee.workers.dispatch import QueueDispatcher

pytestmark = pytest.mark.slow


def _start(url: str, log: Path) -> subprocess.Popen[bytes]:
    argv = [*REFEREE, "worker", "--db", url, "--concurrency", "1", "--log-format", "json"]
    argv += ["--metrics-listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0"]
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)}
        )


def _endpoints(log: Path, proc: subprocess.Popen[bytes]) -> tuple[str, str]:
    """The worker's metrics URL and health address, from its log once both listen."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        events = {line["event"]: line for line in log_lines(log)}
        if "metrics_listening" in events and "health_listening" in events:
            return events["metrics_listening"]["url"], events["health_listening"]["address"]
        time.sleep(0.1)
    raise AssertionError(f"the worker did not start its endpoints: {log.read_text()[-2000:]}")


def _samples(url: str) -> dict[tuple[str, str], float]:
    """Each sample by name and its labels as sorted JSON."""
    text = httpx.get(url, timeout=10).text
    return {
        (s.name, json.dumps(s.labels, sort_keys=True)): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(samples: dict[tuple[str, str], float], name: str, **labels: str) -> float:
    return samples.get((name, json.dumps(labels, sort_keys=True)), 0.0)


def _settled(url: str) -> dict[tuple[str, str], float]:
    """The worker's samples once both jobs are counted and the queue sampler (every 5 s) has
    seen the queue empty; the last scrape if that does not happen within 30 s."""
    deadline = time.monotonic() + 30
    while True:
        samples = _samples(url)
        done = _value(samples, "tetromino_jobs_finished_total", queue="games", outcome="recorded")
        sampled = ("tetromino_queue_depth", json.dumps({"queue": "games"})) in samples
        empty = _value(samples, "tetromino_queue_depth", queue="games") == 0
        if (done == 2 and sampled and empty) or time.monotonic() > deadline:
            return samples
        time.sleep(0.25)


async def _health(address: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        return int(reply.status)


async def _run_queued(repo: Repository, url: str, name: str) -> object:
    async with QueueDispatcher(repo, url) as queue:
        return await TournamentRunner(repo, name, queue=queue, ladder=None).run()


def test_worker_metrics_count_its_jobs_and_games(pg_url: str, tmp_path: Path) -> None:
    """After one worker played the two queued games of a pairing, its /metrics shows two jobs
    recorded, two games finished, their moves, four sandbox launches, no game in flight and an
    empty queue, and its health service answers SERVING."""
    repo = Repository.open(pg_url)
    t = make_tournament(repo, "metered", [RANDOM, GREEDY])
    log = tmp_path / "worker.log"
    worker = _start(pg_url, log)
    try:
        metrics_url, health_address = _endpoints(log, worker)
        asyncio.run(asyncio.wait_for(_run_queued(repo, pg_url, "metered"), 120))
        samples = _settled(metrics_url)
        health = asyncio.run(_health(health_address))
    finally:
        stop_workers([worker])
    games = repo.list_games(tournament_id=t.id)
    repo.close()
    assert worker.returncode == 0
    assert _value(samples, "tetromino_jobs_finished_total", queue="games", outcome="recorded") == 2
    verdicts = {g.verdict.value for g in games}
    finished = sum(
        _value(samples, "tetromino_games_finished_total", game="tetress", verdict=v)
        for v in verdicts
    )
    assert finished == 2
    moves = sum(g.plies for g in games)
    assert _value(samples, "tetromino_moves_total", game="tetress") == moves
    sandbox = games[0].sandbox
    assert _value(samples, "tetromino_sandbox_launch_seconds_count", isolation=sandbox) == 4
    assert _value(samples, "tetromino_games_in_flight", game="tetress") == 0
    assert ("tetromino_queue_depth", json.dumps({"queue": "games"})) in samples
    assert _value(samples, "tetromino_queue_depth", queue="games") == 0
    assert health == health_pb2.HealthCheckResponse.SERVING
