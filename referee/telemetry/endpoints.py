"""What an orchestrator and a scraper talk to: ``/metrics`` over HTTP and the gRPC health service.

Both run on the caller's asyncio event loop, beside whatever else the process serves:
``referee serve`` (which already answers health on its own gRPC port) and ``referee worker``
(which has no gRPC port of its own, so :func:`serve_health` gives it one).

* :func:`serve_metrics` starts uvicorn (the web front's server) on ``HOST:PORT`` with one
  route, ``/metrics``; :func:`metrics_route` is the same route for an app that already runs
  (the web front mounts it).
* :func:`serve_health` starts a gRPC server holding only ``grpc.health.v1.Health`` (and
  reflection, so ``grpcurl`` works): ``SERVING`` while the process works, ``NOT_SERVING``
  once it drains (:meth:`HealthServer.set_serving`), and gone when stopped.
"""

from __future__ import annotations

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from referee.asgi.server import WebServer, parse_address
from referee.telemetry.metrics import CONTENT_TYPE_LATEST, exposition

__all__ = ["HealthServer", "metrics_app", "metrics_route", "serve_health", "serve_metrics"]

METRICS_PATH = "/metrics"


async def _metrics(request: Request) -> Response:
    return Response(exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST})


def metrics_route() -> Route:
    """``GET /metrics``: this process's registry in Prometheus's text format."""
    return Route(METRICS_PATH, _metrics, methods=["GET"])


def metrics_app() -> Starlette:
    """An ASGI app serving only ``/metrics`` (404 for anything else)."""
    return Starlette(routes=[metrics_route()])


async def serve_metrics(address: str) -> WebServer:
    """Serve ``/metrics`` on ``address`` (``HOST:PORT``; port 0 picks one: read ``.port``) on
    this event loop; ``await server.stop()`` ends it. ``OSError``/``ValueError`` when the
    address cannot be used."""
    host, port = parse_address(address)
    server = WebServer(metrics_app(), host, port)
    await server.start()
    return server


class HealthServer:
    """A gRPC server with the standard health service only (a worker's liveness and readiness)."""

    def __init__(self, server: grpc.aio.Server, servicer: health.aio.HealthServicer, address: str):
        self.server = server
        self.servicer = servicer
        #: The bound address (``host:port``, the real port when 0 was asked for).
        self.address = address

    async def set_serving(self, serving: bool, service: str = "") -> None:
        """Report ``SERVING`` or ``NOT_SERVING`` for ``service`` (``""``: the whole process)."""
        response = health_pb2.HealthCheckResponse
        status = response.SERVING if serving else response.NOT_SERVING
        await self.servicer.set(service, status)

    async def stop(self, grace: float | None = 1.0) -> None:
        """Answer ``NOT_SERVING`` to every check, then stop listening."""
        await self.servicer.enter_graceful_shutdown()
        await self.server.stop(grace)


async def serve_health(address: str, services: tuple[str, ...] = ()) -> HealthServer:
    """Start a health-only gRPC server on ``address`` (``HOST:PORT``, port 0 picks one),
    reporting ``SERVING`` for the process (``""``) and each name in ``services``."""
    # Without it gRPC binds a port another process already holds (SO_REUSEPORT), and two
    # workers on one host would answer each other's probes.
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    reflection.enable_server_reflection((health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:  # recent gRPC raises where older ones returned port 0
        raise OSError(f"cannot listen on {address}: {exc}") from None
    if not port:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    health_server = HealthServer(server, servicer, f"{address.rsplit(':', 1)[0]}:{port}")
    for name in ("", *services):
        await health_server.set_serving(True, name)
    return health_server
