"""The commands deploy/compose.yaml runs, run here as plain processes against the local
PostgreSQL (containers cannot run on this machine): the migration one-shot, then the server,
whose /metrics (own port and web port) and gRPC health service answer as the compose file's
Prometheus and a load balancer expect."""

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


async def _until_listening(proc: asyncio.subprocess.Process) -> dict[str, dict[str, Any]]:
    """The server's JSON log lines by event, read until gRPC, web and metrics all listen."""
    assert proc.stderr is not None
    events: dict[str, dict[str, Any]] = {}
    wanted = {"listening", "web_listening", "metrics_listening"}
    async with asyncio.timeout(60):
        while not wanted <= events.keys():
            line = await proc.stderr.readline()
            assert line, f"the server exited before listening: {events}"
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            events.setdefault(entry["event"], entry)
    return events


async def _health(address: str) -> list[int]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return [
            (await stub.Check(health_pb2.HealthCheckRequest(service=name))).status
            for name in ("", "tetromino.referee.v1.Referee")
        ]


async def _serve_and_probe(database: str) -> dict[str, Any]:
    proc = await _referee(*compose_command("server", database))
    try:
        events = await _until_listening(proc)
        address = events["listening"]["address"]
        async with httpx.AsyncClient() as client:
            own = await client.get(events["metrics_listening"]["url"])
            web = events["web_listening"]["url"]
            on_web = await client.get(f"{web}/metrics")
            healthz = await client.get(f"{web}/healthz")
        health = await _health(address)
    finally:
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            code = await proc.wait()
    return {"own": own, "on_web": on_web, "healthz": healthz, "health": health, "code": code}


@pytest.mark.slow
@pytest.mark.postgres
def test_compose_commands_migrate_then_serve_metrics_and_health(
    throwaway_postgres: Callable[[], AbstractContextManager[str]],
) -> None:
    """The migrate service's command brings an empty database to the newest schema; the
    server service's command then serves /metrics on its metrics port and on the web port,
    answers the gRPC health check SERVING, and exits 0 on SIGTERM."""
    with throwaway_postgres() as database:

        async def migrate() -> tuple[int, bytes]:
            proc = await _referee(*compose_command("migrate", database))
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()
            return proc.returncode, out

        _, out = asyncio.run(migrate())
        engine = make_engine(database)
        try:
            assert current_revision(engine) == head_revision()
        finally:
            engine.dispose()
        assert out.decode().strip() == f"schema at {head_revision()}"
        probed = asyncio.run(_serve_and_probe(database))
    for response in (probed["own"], probed["on_web"]):
        assert response.status_code == 200
        assert "tetromino_sessions_connected 0.0" in response.text
        assert 'tetromino_handshakes_refused_total{reason="unauthenticated"}' in response.text
    assert probed["healthz"].text == "ok\n"
    serving = health_pb2.HealthCheckResponse.SERVING
    assert probed["health"] == [serving, serving]
    assert probed["code"] == 0
