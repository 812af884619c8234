"""A casual game of connected bots goes to the live hub's relay (other processes' spectators):
its start and every move as they come, its end only once the recorder is done storing it."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from client_sdk import run
from client_sdk.examples.random_bot import RandomBot
from engine.registry import load_game
from referee.hosting.casual_pairing import CasualPairing
from referee.hosting.matchmaker import Matchmaker
from referee.live.hub import LiveEnd, LiveGame, LiveHub, LiveMove
from referee.match.report import GameReport
from referee.match.runner import MatchRunner
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable
from referee.server.session import BotSession

pytestmark = pytest.mark.slow


class _Relay:
    """Records what the hub relays, in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.changed = asyncio.Event()

    def started(self, live: LiveGame) -> None:
        self.sent.append(("start", live.uid))

    def moved(self, uid: str, move: LiveMove) -> None:
        self.sent.append(("move", uid))

    def ended(self, uid: str, end: LiveEnd) -> None:
        self.sent.append(("end", uid))
        self.changed.set()


def _play_once(address: str, token: str) -> None:
    run(RandomBot, address, token, name=f"r{token}", games=1, reconnect=False, log=lambda _: None)


def test_a_casual_games_end_is_relayed_once_it_is_stored() -> None:
    """The hub's own spectators see the end at once; the relay gets start, every move, then
    the end only after the storing task the recorder returned is done."""

    async def main() -> tuple[list[tuple[str, str]], list[tuple[str, str]], int, str]:
        server = RefereeServer(auth=TokenTable({"a": "alice", "b": "bob"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        hub = LiveHub()
        relay = hub.relay = _Relay()
        stored = asyncio.Event()
        handed: list[str] = []

        async def store() -> None:
            await stored.wait()

        def on_game(
            runner: MatchRunner[BotSession], report: GameReport
        ) -> asyncio.Task[None] | None:
            handed.append(runner.game_id)
            return asyncio.create_task(store())

        matchmaker = Matchmaker(
            server.lobby, [load_game("tetress")], on_game=on_game, hub=hub,
            policy=CasualPairing(0.0, 0.0),
        )  # fmt: skip
        pairing = asyncio.create_task(matchmaker.run())
        bots = [
            asyncio.create_task(asyncio.to_thread(_play_once, address, token))
            for token in ("a", "b")
        ]
        try:
            while not handed:
                await asyncio.sleep(0.02)
            uid = handed[0]
            live = hub.get(uid)
            assert live is not None and live.end is not None  # shown here at once
            before = list(relay.sent)
            stored.set()
            await asyncio.wait_for(relay.changed.wait(), 30)
            await asyncio.wait_for(asyncio.gather(*bots), 60)
            return before, list(relay.sent), len(live.moves), uid
        finally:
            pairing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pairing
            await server.stop(0)

    before, after, moves, uid = asyncio.run(asyncio.wait_for(main(), 120))
    assert moves > 0
    assert before == [("start", uid)] + [("move", uid)] * moves
    assert after == [*before, ("end", uid)]
