"""The operations endpoints in-process: /metrics over HTTP, the health-only gRPC server, the
metric names and labels, and the job id in log lines (no process started)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from client_sdk.proto import referee_pb2 as pb
from referee.commands._ops import OpsAddresses, start_ops
from referee.server.admission import Refusal
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable
from referee.telemetry import logs, metrics
from referee.telemetry.endpoints import serve_health, serve_metrics

PLAY = "/tetromino.referee.v1.Referee/Play"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and sorted labels."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def _scrape(url: str) -> tuple[str, str]:
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
        response.raise_for_status()
        return response.headers["content-type"], response.text


def test_metrics_endpoint_serves_the_registry() -> None:
    """serve_metrics on port 0 answers GET /metrics in Prometheus's text format with the
    platform's metric families, and 404 elsewhere."""

    async def scenario() -> tuple[str, str, int]:
        server = await serve_metrics("127.0.0.1:0")
        try:
            kind, text = await _scrape(f"{server.url}/metrics")
            async with httpx.AsyncClient() as client:
                missing = (await client.get(f"{server.url}/other")).status_code
        finally:
            await server.stop()
        return kind, text, missing

    kind, text, missing = asyncio.run(scenario())
    assert kind.startswith("text/plain") and "version=" in kind
    names = {family.name for family in text_string_to_metric_families(text)}
    for name in (
        "tetromino_games_in_flight",
        "tetromino_moves",
        "tetromino_games_finished",
        "tetromino_move_overhead_seconds",
        "tetromino_sandbox_launch_seconds",
        "tetromino_sessions_connected",
        "tetromino_handshakes_refused",
        "tetromino_queue_depth",
        "tetromino_oldest_job_age_seconds",
        "process_resident_memory_bytes",
    ):
        assert name in names, name
    assert missing == 404


def test_every_refusal_reason_is_a_series_from_the_start() -> None:
    """Each handshake refusal reason is exposed (at zero if never seen), so a scraper's
    increase() sees the first refusal of each kind."""
    samples = _samples(metrics.exposition().decode())
    for why in Refusal:
        key = ("tetromino_handshakes_refused_total", (("reason", why.value),))
        assert key in samples, why


def test_queue_gauges_are_set_by_the_functions_workers_call() -> None:
    """set_queue_depth, set_oldest_job_age and job_finished show up labelled by queue only
    (a negative age, from clock skew between machines, is shown as 0)."""
    metrics.set_queue_depth("games-test", 7)
    metrics.set_oldest_job_age("games-test", -3.0)
    metrics.job_finished("games-test", "succeeded")
    samples = _samples(metrics.exposition().decode())
    assert samples[("tetromino_queue_depth", (("queue", "games-test"),))] == 7
    assert samples[("tetromino_oldest_job_age_seconds", (("queue", "games-test"),))] == 0
    key = ("tetromino_jobs_finished_total", (("outcome", "succeeded"), ("queue", "games-test")))
    assert samples[key] >= 1


def test_no_metric_is_labelled_by_an_identity() -> None:
    """Label names stay a bounded vocabulary: never a game id, player, bot, token or job id.
    Every metric the module declares is checked, whether or not this process has fed it yet
    (a label shows in the exposition only once a sample has it)."""
    # Each a fixed word: a game's kind, a verdict, a queue, a loop's name, a step's name...
    allowed = {"game", "verdict", "reason", "kind", "queue", "outcome", "isolation"}
    allowed |= {"result", "loop", "step"}
    declared = {
        metric._name: set(metric._labelnames)
        for metric in vars(metrics).values()
        if isinstance(metric, MetricWrapperBase)
    }
    assert "tetromino_sandbox_warm_launches" in declared  # the check sees the module's metrics
    assert {name: labels - allowed for name, labels in declared.items() if labels - allowed} == {}
    platform = ("process_", "python_")
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        if not family.name.startswith(platform):
            for sample in family.samples:
                assert set(sample.labels) <= allowed | {"le"}, (family.name, sample.labels)


async def _bad_hello(address: str) -> str:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(PLAY)()
        version = pb.PROTOCOL_VERSION_CURRENT
        hello = pb.Hello(bot_name="intruder", token="guessed", protocol_version=version)
        await call.write(pb.BotMessage(hello=hello).SerializeToString())
        first = pb.RefereeMessage.FromString(await call.read())
        call.cancel()
        return str(first.error.message)


def test_a_bad_token_is_counted_by_reason() -> None:
    """A handshake refused for its token raises the server's own count and the Prometheus
    counter tetromino_handshakes_refused_total{reason="unauthenticated"} by one."""
    key = ("tetromino_handshakes_refused_total", (("reason", "unauthenticated"),))

    async def scenario() -> tuple[str, int]:
        server = RefereeServer(auth=TokenTable({"real-token": "alice"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        try:
            message = await _bad_hello(address)
        finally:
            await server.stop(0)
        return message, server.handshakes.refused[Refusal.UNAUTHENTICATED]

    before = _samples(metrics.exposition().decode())[key]
    message, counted = asyncio.run(scenario())
    assert "token" in message
    assert counted == 1
    assert _samples(metrics.exposition().decode())[key] == before + 1


def test_health_server_reports_serving_then_not() -> None:
    """serve_health answers SERVING for the process, NOT_SERVING after set_serving(False),
    and NOT_FOUND for a service it does not hold."""

    async def scenario() -> list[int | str]:
        server = await serve_health("127.0.0.1:0", services=("worker",))
        answers: list[int | str] = []
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                for name in ("", "worker"):
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=name))
                    answers.append(reply.status)
                await server.set_serving(False)
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""))
                answers.append(reply.status)
                try:
                    await stub.Check(health_pb2.HealthCheckRequest(service="nothing"))
                except grpc.aio.AioRpcError as exc:
                    answers.append(exc.code().name)
        finally:
            await server.stop(0)
        return answers

    serving = health_pb2.HealthCheckResponse.SERVING
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
    assert asyncio.run(scenario()) == [serving, serving, not_serving, "NOT_FOUND"]


def test_health_server_refuses_a_taken_port() -> None:
    """An address that cannot be bound is an OSError naming it, not a half-started server."""

    async def scenario() -> None:
        first = await serve_health("127.0.0.1:0")
        try:
            with pytest.raises(OSError, match="cannot listen"):
                await serve_health(first.address)
        finally:
            await first.stop(0)

    asyncio.run(scenario())


def test_job_and_game_ids_ride_on_every_json_line() -> None:
    """Inside bound_job every JSON log line carries job_id (also in tasks started there), and
    lines outside carry job_id null, like game_id, seat and ply."""
    out = io.StringIO()
    logs.configure("json", "INFO", stream=out)
    log = logs.get_logger("test")

    async def scenario() -> None:
        async def child() -> None:
            log.info("in_task")

        with logs.bound_job(4217):
            log.info("in_job")
            await asyncio.create_task(child())
        log.info("after")

    try:
        asyncio.run(scenario())
    finally:
        logs.configure("console", "WARNING")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    by_event = {line["event"]: line for line in lines}
    assert by_event["in_job"]["job_id"] == "4217"
    assert by_event["in_task"]["job_id"] == "4217"
    assert by_event["after"]["job_id"] is None
    assert all({"game_id", "seat", "ply", "job_id"} <= set(line) for line in lines)


def test_ops_options_name_the_option_of_a_bad_address() -> None:
    """start_ops refuses an unusable --metrics-listen or --health-listen with an error naming
    the option, and stops whatever it had started."""

    async def scenario() -> list[str]:
        taken = await serve_health("127.0.0.1:0")
        errors = []
        cases = [
            OpsAddresses(metrics="no-port-here"),
            OpsAddresses(metrics="127.0.0.1:0", health=taken.address),
        ]
        try:
            for args in cases:
                try:
                    await start_ops(args)
                except (OSError, ValueError) as exc:
                    errors.append(str(exc))
        finally:
            await taken.stop(0)
        return errors

    errors = asyncio.run(scenario())
    assert errors[0].startswith("--metrics-listen: ") and "HOST:PORT" in errors[0]
    assert errors[1].startswith("--health-listen: cannot listen")


def test_every_platform_metric_is_documented() -> None:
    """docs/operations.md names each tetromino_* metric the registry holds (with the _total
    suffix a counter is exposed with), so the table cannot drift from the code."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        if not family.name.startswith("tetromino_"):
            continue
        exposed = f"{family.name}_total" if family.type == "counter" else family.name
        assert f"`{exposed}`" in docs, exposed
