"""Helpers for the referee tests: a real server on 127.0.0.1 port 0 and bots as subprocesses."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
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

RAWBOT = Path(__file__).parent / "bots" / "rawbot.py"
REPO = Path(__file__).resolve().parents[2]


def rawbot(*flags: str) -> BotSpec:
    """The raw-protocol test bot as a shell command, with misbehaviour flags."""
    extra = " ".join(flags)
    return BotSpec(
        "command", f"{sys.executable} {RAWBOT} --server {{server}} --token {{token}} {extra}"
    )


def sdk_bot(module: str = "client_sdk.examples.random_bot") -> BotSpec:
    return BotSpec("sdk", module)


@dataclass
class Arena:
    """A server accepting the tokens ``t0``..``tN`` (player ids ``p0``..``pN``)."""

    server: RefereeServer
    address: str
    bots: list[LaunchedBot]

    async def connect(self, spec: BotSpec, player: str, timeout: float = 30.0) -> BotSession:
        """Launch ``spec`` with ``player``'s token and return its session once connected."""
        bot = await launch(spec, self.address, f"token-{player}")
        self.bots.append(bot)
        waiter = self.server.lobby.wait_for(lambda s: s.identity.player_id == player, timeout)
        try:
            return await waiter
        except TimeoutError:
            raise AssertionError(f"{player} never connected:\n{bot.output.text()}") from None

    async def game(
        self,
        game: Game[Any],
        specs: Sequence[BotSpec],
        tag: str,
        *,
        time_control: TimeControl | None = None,
        memory_limit_bytes: int = 0,
    ) -> GameReport:
        """Launch two bots and play one game between them on this server."""
        first = len(self.bots)
        sessions = await asyncio.gather(
            *(self.connect(spec, f"{tag}{i}") for i, spec in enumerate(specs))
        )
        bots = [
            next(b for b in self.bots[first:] if b.token == f"token-{tag}{i}")
            for i in range(len(specs))
        ]
        runner = MatchRunner(
            game,
            sessions,
            time_control=time_control,
            memory_limit_bytes=memory_limit_bytes,
            self_reported_memory=(False, False),
        )
        watchers = watch_launched(runner, bots)
        report = await runner.run()
        for task in watchers:
            task.cancel()
        for session in sessions:
            await session.goodbye("done")
        for bot in bots:
            await bot.wait(2.0)
        note_launched(report, bots)
        return report


@contextlib.asynccontextmanager
async def arena(players: Sequence[str]) -> AsyncIterator[Arena]:
    """A running server for ``players`` (token ``token-<player>``); every bot is stopped after."""
    server = RefereeServer(auth=TokenTable({f"token-{p}": p for p in players}))
    address = await server.start("127.0.0.1:0")
    box = Arena(server, address, [])
    try:
        yield box
    finally:
        await asyncio.gather(*(bot.stop(1.0) for bot in box.bots), return_exceptions=True)
        await server.stop(0.5)
