"""``--metrics-listen`` and ``--health-listen``: the operations endpoints of a long-running
command (``referee serve``, ``referee worker``), started on its event loop and stopped with it."""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.asgi.server import WebServer
    from referee.telemetry.endpoints import HealthServer


@dataclass(frozen=True, slots=True)
class OpsAddresses:
    """Where the operations endpoints listen (``None``: not served)."""

    metrics: str | None = None
    #: ``referee serve`` answers health on its gRPC port and has no ``--health-listen``.
    health: str | None = None


def add_ops_options(parser: argparse.ArgumentParser, *, health: bool = True) -> None:
    """``--metrics-listen`` (and, with ``health``, ``--health-listen``; ``referee serve``
    answers health on its own gRPC port already)."""
    group = parser.add_argument_group("operations")
    group.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off; port 0 "
        "picks one, logged as metrics_listening); see docs/operations.md",
    )
    if health:
        group.add_argument(
            "--health-listen",
            metavar="HOST:PORT",
            help="serve the standard gRPC health service (grpc.health.v1.Health) here "
            "(default: off)",
        )


@dataclass
class OpsEndpoints:
    """The endpoints a command started (``None``: not asked for)."""

    metrics: WebServer | None = None
    health: HealthServer | None = None

    @property
    def metrics_url(self) -> str | None:
        return None if self.metrics is None else f"{self.metrics.url}/metrics"

    async def stop(self) -> None:
        if self.health is not None:
            await self.health.stop(0.5)
        if self.metrics is not None:
            with contextlib.suppress(Exception):
                await self.metrics.stop()


async def start_ops(addresses: OpsAddresses) -> OpsEndpoints:
    """Start what ``addresses`` asks for on this loop, logging each bound address; ``OSError`` or
    ``ValueError`` naming the option (with what was started already stopped) when an address
    cannot be used."""
    from referee.telemetry.endpoints import serve_health, serve_metrics
    from referee.telemetry.logs import get_logger

    log = get_logger("referee.ops")
    ops = OpsEndpoints()
    option = "--metrics-listen"
    try:
        if addresses.metrics:
            ops.metrics = await serve_metrics(addresses.metrics)
            log.info("metrics_listening", url=ops.metrics_url)
        option = "--health-listen"
        if addresses.health:
            ops.health = await serve_health(addresses.health)
            log.info("health_listening", address=ops.health.address)
    except (OSError, ValueError) as exc:
        await ops.stop()
        raise type(exc)(f"{option}: {exc}") from None
    except BaseException:
        await ops.stop()
        raise
    return ops
