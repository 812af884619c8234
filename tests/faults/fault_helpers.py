"""Helpers for the fault tests: the misbehaving bot, and a TCP proxy the test controls (to cut
or freeze a bot's connection). The referee and the launched bots come from
:func:`referee.play.local.local_referee`."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from referee.sandbox.launch import BotSpec

FAULTBOT = Path(__file__).parent / "bots" / "faultbot.py"


def faultbot(fault: str = "none", at: int = 0) -> BotSpec:
    """The raw-protocol fault bot as a shell command."""
    return BotSpec(
        "command",
        f"{sys.executable} {FAULTBOT} --server {{server}} --token {{token}} "
        f"--fault {fault} --at {at}",
    )


def sdk_bot(module: str = "client_sdk.examples.random_bot") -> BotSpec:
    return BotSpec("sdk", module)


class Proxy:
    """A TCP forwarder to ``target``: :meth:`reset` cuts every connection, :meth:`freeze`
    stops all traffic (nothing is read or forwarded any more, new connections hang);
    ``lag_s`` delays what the client sends by that much (in order, its close too)."""

    def __init__(self, target: str, lag_s: float = 0.0) -> None:
        self.lag_s = lag_s
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.address = ""
        self.connections = 0
        #: Bytes forwarded so far (both directions).
        self.forwarded = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._thaw = asyncio.Event()
        self._thaw.set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        return self.address

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._thaw.wait()
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self._writers += [writer, up_writer]
        for src, dst, lag in ((reader, up_writer, self.lag_s), (up_reader, writer, 0.0)):
            task = asyncio.create_task(self._pump(src, dst, lag))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, lag: float = 0.0
    ) -> None:
        with contextlib.suppress(Exception):
            while True:
                await self._thaw.wait()
                data = await src.read(65536)
                if lag:
                    await asyncio.sleep(lag)
                if not data:
                    break
                await self._thaw.wait()
                self.forwarded += len(data)
                dst.write(data)
                await dst.drain()
        with contextlib.suppress(Exception):
            dst.close()

    def reset(self) -> None:
        """Cut every open connection (both ends see it drop)."""
        for writer in self._writers:
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._writers.clear()

    def freeze(self) -> None:
        self._thaw.clear()

    async def close(self) -> None:
        self._thaw.set()
        self.reset()
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
