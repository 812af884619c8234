"""Helpers for the fault tests: a real server, misbehaving bots as real subprocesses, and a
TCP proxy the test controls (to cut or freeze a bot's connection)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.game import Game
from referee.auth import TokenTable
from referee.clock import TimeControl
from referee.launch import BotSpec, LaunchedBot, launch
from referee.local import note_launched, watch_launched
from referee.match import GameReport, MatchRunner
from referee.server import RefereeServer
from referee.session import BotSession

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
    stops all traffic (nothing is read or forwarded any more, new connections hang)."""

    def __init__(self, target: str) -> None:
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
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while True:
                await self._thaw.wait()
                data = await src.read(65536)
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


@dataclass
class Played:
    report: GameReport
    bots: list[LaunchedBot]


@dataclass
class FaultArena:
    """One server; every game of a test is played on it, concurrently."""

    server: RefereeServer
    address: str
    tokens: dict[str, str]
    bots: list[LaunchedBot] = field(default_factory=list)
    proxies: list[Proxy] = field(default_factory=list)

    async def proxy(self) -> Proxy:
        proxy = Proxy(self.address)
        await proxy.start()
        self.proxies.append(proxy)
        return proxy

    async def play(
        self,
        game: Game[Any],
        specs: Sequence[BotSpec],
        tag: str,
        *,
        time_control: TimeControl,
        memory_mb: float = 250,
        remote: Sequence[bool] = (False, False),
        via: Sequence[Proxy | None] = (None, None),
        connect_timeout: float = 60.0,
    ) -> Played:
        """Launch both bots, play one game. A ``remote`` seat is refereed as a bot the server
        did not launch (its own memory reports are judged, its process is not watched)."""
        bots: list[LaunchedBot] = []
        for seat, spec in enumerate(specs):
            player = f"{tag}{seat}"
            proxy = via[seat]
            address = proxy.address if proxy is not None else self.address
            bot = await launch(spec, address, self.tokens[player], memory_mb=memory_mb)
            bots.append(bot)
            self.bots.append(bot)
        lobby = self.server.lobby
        try:
            sessions = await asyncio.gather(
                *(
                    lobby.wait_for(_player_is(f"{tag}{i}"), connect_timeout)
                    for i in range(len(specs))
                )
            )
        except TimeoutError:
            outputs = "\n".join(b.output.text() for b in bots)
            raise AssertionError(f"{tag}: a bot never connected:\n{outputs}") from None
        runner = MatchRunner(
            game,
            sessions,
            time_control=time_control,
            memory_limit_bytes=int(memory_mb * 1024 * 1024),
            self_reported_memory=remote,
        )
        watched = [None if r else b for b, r in zip(bots, remote, strict=True)]
        watchers = watch_launched(runner, watched)
        report = await runner.run()
        for task in watchers:
            task.cancel()
        for session in sessions:
            await session.goodbye("done")
        await asyncio.gather(*(b.wait(3.0) for b in bots))
        await asyncio.gather(*(b.stop(1.0) for b in bots))
        note_launched(report, watched)
        return Played(report, bots)


def _player_is(player: str) -> Callable[[BotSession], bool]:
    return lambda session: session.identity.player_id == player


@contextlib.asynccontextmanager
async def fault_arena(
    tags: Sequence[str], *, resume_window: float = 1.5, keepalive: float = 1.0
) -> AsyncIterator[FaultArena]:
    tokens = {f"{tag}{seat}": f"token-{tag}{seat}" for tag in tags for seat in range(2)}
    server = RefereeServer(
        auth=TokenTable({token: player for player, token in tokens.items()}),
        resume_window=resume_window,
        keepalive_time_s=keepalive,
        keepalive_timeout_s=keepalive,
    )
    address = await server.start("127.0.0.1:0")
    box = FaultArena(server, address, tokens)
    try:
        yield box
    finally:
        await asyncio.gather(*(b.stop(0.5) for b in box.bots), return_exceptions=True)
        for proxy in box.proxies:
            await proxy.close()
        await server.stop(0.5)
