"""Serving the web front with uvicorn on the caller's event loop.

``referee serve`` runs it beside the gRPC server on one loop (the live hub needs that: its
notifications are loop-bound); ``referee web`` runs it alone. Uvicorn's own signal handling is
left out: the caller owns SIGTERM/SIGINT and stops the server with :meth:`WebServer.stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

import uvicorn

#: Seconds an idle keep-alive connection is kept open (uvicorn's default is 5). A client that
#: reuses a connection just as the server closes it gets a reset, not a page; a reader's
#: pause between pages is often longer than 5 s, so the common case is kept well clear of it.
KEEP_ALIVE_S = 60


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6; port 0 picks one)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"web address must be HOST:PORT, got {text!r}")
    host = host.strip("[]") or "127.0.0.1"
    value = int(port)
    if not 0 <= value <= 65535:
        raise ValueError(f"bad port in {text!r}")
    return host, value


class WebServer:
    """One uvicorn server on an already bound socket."""

    def __init__(self, app: Any, host: str, port: int, *, proxy_headers: bool = False) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it: a response's head and body leave without waiting
        # on the client's delayed acknowledgement (40 ms on Linux).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock.bind((host, port))
        except OSError:
            self.sock.close()
            raise
        self.sock.listen(2048)
        self.sock.setblocking(False)
        self.host = host
        self.port = int(self.sock.getsockname()[1])
        self.app = app
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_config=None,
            access_log=False,
            proxy_headers=proxy_headers,
            forwarded_allow_ips="127.0.0.1" if proxy_headers else None,
            timeout_graceful_shutdown=2,
            timeout_keep_alive=KEEP_ALIVE_S,
            server_header=False,
        )
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
        self.server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        # _serve, not serve: serve() installs uvicorn's signal handlers over the caller's.
        self._task = asyncio.create_task(self.server._serve(sockets=[self.sock]))
        while not self.server.started:
            if self._task.done():
                self._task.result()
                raise OSError("the web server stopped while starting")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self.server.should_exit = True
        # Long-lived SSE streams would hold a graceful shutdown for its whole timeout.
        self.server.force_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)
        self.sock.close()


async def start_web(app: Any, address: str) -> WebServer:
    host, port = parse_address(address)
    server = WebServer(app, host, port)
    await server.start()
    return server
