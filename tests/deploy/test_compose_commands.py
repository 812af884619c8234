"""The commands deploy/compose.yaml runs, run here as plain processes against the local
PostgreSQL (containers cannot run on this machine): the migration one-shot, then the server and
a worker, whose /metrics and gRPC health services answer as the compose file's Prometheus, a
load balancer and Kubernetes' probes expect."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.storage.db import current_revision, head_revision, make_engine

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "deploy" / "compose.yaml").read_text())
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def compose_command(service: str, database: str) -> list[str]:
    """``service``'s command from compose.yaml with its database URL replaced by ``database``
    and every ``0.0.0.0:PORT`` by ``127.0.0.1:0`` (a free port on this machine)."""
    words = []
    for word in COMPOSE["services"][service]["command"]:
        text = str(word)
        if text == COMPOSE["x-database-url"]:
            text = database
        words.append(re.sub(r"^0\.0\.0\.0:\d+$", "127.0.0.1:0", text))
    return words


async def _referee(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "referee.commands.main",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=ENV,
    )


async def _until_listening(
    proc: asyncio.subprocess.Process, wanted: set[str]
) -> dict[str, dict[str, Any]]:
    """The process's JSON log lines by event, read until every ``wanted`` event was logged."""
    assert proc.stderr is not None
    events: dict[str, dict[str, Any]] = {}
    async with asyncio.timeout(60):
        while not wanted <= events.keys():
            line = await proc.stderr.readline()
            assert line, f"the process exited before listening: {events}"
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            events.setdefault(entry["event"], entry)
    return events


async def _health(address: str, services: tuple[str, ...]) -> list[int]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return [
            (await stub.Check(health_pb2.HealthCheckRequest(service=name))).status
            for name in services
        ]


async def _stop(proc: asyncio.subprocess.Process) -> int:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    async with asyncio.timeout(90):
        return await proc.wait()


async def _serve_and_probe(database: str) -> dict[str, Any]:
    server = await _referee(*compose_command("server", database))
    worker = await _referee(*compose_command("worker", database))
    try:
        events = await _until_listening(server, {"listening", "web_listening", "metrics_listening"})
        worker_events = await _until_listening(worker, {"metrics_listening", "health_listening"})
        web = events["web_listening"]["url"]
        async with httpx.AsyncClient() as client:
            own = await client.get(events["metrics_listening"]["url"])
            on_web = await client.get(f"{web}/metrics")
            healthz = await client.get(f"{web}/healthz")
            # The worker samples the queue as it starts; give it one round.
            for _ in range(50):
                of_worker = await client.get(worker_events["metrics_listening"]["url"])
                if "tetromino_queue_depth{" in of_worker.text:
                    break
                await asyncio.sleep(0.2)
        health = await _health(events["listening"]["address"], ("", "tetromino.referee.v1.Referee"))
        worker_health = await _health(worker_events["health_listening"]["address"], ("",))
    finally:
        codes = [await _stop(server), await _stop(worker)]
    return {
        "own": own,
        "on_web": on_web,
        "healthz": healthz,
        "health": health,
        "worker": of_worker,
        "worker_health": worker_health,
        "codes": codes,
    }


@pytest.mark.slow
@pytest.mark.postgres
def test_compose_commands_migrate_then_serve_metrics_and_health(
    throwaway_postgres: Callable[[], AbstractContextManager[str]],
) -> None:
    """The migrate service's command brings an empty database to the newest schema, job queue
    included; then the server service's command serves /metrics on its metrics port and the
    web port and answers the gRPC health check SERVING, the worker service's command serves
    /metrics with the queue's depth and its own health service SERVING, and both exit 0 on
    SIGTERM."""
    with throwaway_postgres() as database:

        async def migrate() -> str:
            proc = await _referee(*compose_command("migrate", database))
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()
            return out.decode()

        out = asyncio.run(migrate())
        engine = make_engine(database)
        try:
            assert current_revision(engine) == head_revision()
        finally:
            engine.dispose()
        assert out.splitlines() == [f"schema at {head_revision()}", "job queue schema made"]
        probed = asyncio.run(_serve_and_probe(database))
    for response in (probed["own"], probed["on_web"]):
        assert response.status_code == 200
        assert "tetromino_sessions_connected 0.0" in response.text
        assert 'tetromino_handshakes_refused_total{reason="unauthenticated"}' in response.text
    assert probed["healthz"].text == "ok\n"
    assert 'tetromino_queue_depth{queue="games"} 0.0' in probed["worker"].text
    serving = health_pb2.HealthCheckResponse.SERVING
    assert probed["health"] == [serving, serving]
    assert probed["worker_health"] == [serving]
    assert probed["codes"] == [0, 0]
