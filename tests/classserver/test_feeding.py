"""The feeding attack on a real server: one player's token opens a fresh bot name for every
casual game, makes one move and goes silent, so each game is a rated win for its opponent.
Conduct is the player's, whatever the bot's name: the run is caught at its second game, and
every game it fed is voided and the ladder rebuilt without it."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from typing import Any

import pytest

from client_sdk import run
from client_sdk.examples.random_bot import RandomBot
from engine.registry import load_game
from referee.hosting.casual import CasualRecorder
from referee.hosting.casual_pairing import CasualPairing
from referee.hosting.matchmaker import Matchmaker
from referee.match.clock import TimeControl
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable
from referee.storage import Repository
from referee.tournament.ladder import METHOD

pytestmark = pytest.mark.slow

FEEDS = 3


def _one_move_then_silence(state: Any, clocks: Any, moved: list[int]) -> Any:
    """A bot that plays its first move at once and then outstays its clock."""
    if moved:
        time.sleep(3.0)  # not a wait: the game clock is 1 s: lost on time before this returns
    moved.append(1)
    return random.choice(list(state.legal_moves))


def _feed(address: str, index: int) -> None:
    """One game under a fresh bot name (``feed0``, ``feed1``...), from mallory's token."""
    moved: list[int] = []

    def agent(state: Any, clocks: Any) -> Any:
        return _one_move_then_silence(state, clocks, moved)

    run(agent, address, "m", name=f"feed{index}", games=1, reconnect=False, log=lambda _: None)


def test_fresh_bot_names_feed_no_rated_win(tmp_path: Any) -> None:
    """Three feeding games (a fresh name each) against bob's honest bot end stored, all
    voided; bob's ladder entry counts none of them."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    for name in ("mallory", "bob"):
        repo.create_player(name)

    async def main() -> None:
        server = RefereeServer(auth=TokenTable({"m": "mallory", "b": "bob"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        recorder = CasualRecorder(repo)
        matchmaker = Matchmaker(
            server.lobby, [load_game("tetress")], time_control=TimeControl(game_time_s=1.0),
            on_game=recorder.on_game, on_void=recorder.void, policy=CasualPairing(0.0, 0.0),
        )  # fmt: skip
        pairing = asyncio.create_task(matchmaker.run())
        honest = asyncio.create_task(
            asyncio.to_thread(
                run, RandomBot, address, "b", name="honest", reconnect=False, log=lambda _: None
            )
        )
        try:
            for index in range(FEEDS):
                await asyncio.to_thread(_feed, address, index)
            await recorder.drain()
        finally:
            pairing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pairing
            await server.stop(0)
            with contextlib.suppress(Exception):
                await honest

    try:
        asyncio.run(main())
        fed = repo.list_games()  # bob's bot played no one else
        assert len(fed) == FEEDS, fed
        assert all(g.verdict == "time" and g.voided for g in fed), fed
        table = repo.latest_ratings(METHOD, ladder="main")
        assert table is not None
        assert not [row for row in table.rows if row.games], table.rows
    finally:
        repo.close()
