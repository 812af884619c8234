"""A private Unix socket for one launched bot in one game, relayed to the server's own socket.

A server with many games at once (``referee tournament run --listen``) has one gRPC listening
socket; a gRPC server cannot add listening sockets once it runs. So each launched bot gets its
own socket, in a new private folder, that exists only for its game: the referee accepts on it
and copies bytes both ways to the server's socket. Bots of other games never see its path (it
is mounted only into this bot's sandbox) and it is gone, folder and all, when the game ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil

from referee.sandbox.leftovers import run_folder
from referee.telemetry.logs import get_logger

__all__ = ["SocketRelay"]

log = get_logger("referee.sandbox.relay")

_CHUNK = 64 * 1024


class SocketRelay:
    """``unix:`` address of one bot's private socket, relayed to ``upstream`` (``unix:PATH``)."""

    def __init__(self, upstream: str) -> None:
        if not upstream.startswith("unix:"):
            raise ValueError(f"a socket relay forwards to a unix: address, not {upstream!r}")
        self._upstream = upstream.removeprefix("unix:")
        self._folder = run_folder("arena-game-sock-")  # mode 0700, named for this process
        self.path = str(self._folder / "referee.sock")
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        return f"unix:{self.path}"

    async def start(self) -> str:
        """Listen on the private socket; returns its ``unix:`` address."""
        try:
            self._server = await asyncio.start_unix_server(self._accept, path=self.path)
        except BaseException:
            shutil.rmtree(self._folder, ignore_errors=True)
            raise
        return self.address

    async def close(self) -> None:
        """Stop listening, cut every relayed connection, remove the socket and its folder."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        shutil.rmtree(self._folder, ignore_errors=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self._upstream)
        except OSError as exc:
            log.warning("relay_upstream_failed", upstream=self._upstream, error=str(exc))
            writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        except asyncio.CancelledError:
            # Only close() cancels a connection: ending quietly here keeps asyncio's stream
            # callback from logging the cancellation as an error after every game.
            pass
        finally:
            for w in (writer, up_writer):
                w.close()
            self._tasks.discard(task)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of file (then half-close), or until either side fails."""
    with contextlib.suppress(OSError, ConnectionError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
