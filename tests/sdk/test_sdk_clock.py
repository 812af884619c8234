"""The SDK follows the clock the game charges: it learns which from GameStart, and between two
requests the budget its agent sees (a course bot's ``time_remaining``) goes down by what the
move used on that clock."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from client_sdk import Agent, Clocks, GameInfo
from client_sdk._driver import GameDriver
from client_sdk._messages import game_info_of
from client_sdk.proto import referee_pb2 as pb
from engine.game import State
from engine.registry import load_game


class Napper(Agent):
    """Sleeps 0.3 s (wall time, almost no CPU) before a random legal move."""

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        time.sleep(0.3)  # not a wait: the bot's nap is what is measured
        return random.choice(list(state.legal_moves))


def test_game_start_names_the_clock() -> None:
    """``GameInfo.clock`` is the referee's ``TimeControl.clock``; an older referee means wall."""
    game = load_game("tetress")
    info = pb.GameInfo(seat=0, time_control=pb.TimeControl(game_time_s=10, clock="cpu"))
    assert game_info_of("g", info, game).clock == "cpu"
    assert game_info_of("g", pb.GameInfo(seat=0), game).clock == "wall"


@pytest.mark.parametrize(("clock", "charged"), [("cpu", False), ("wall", True)])
def test_the_budget_between_requests_follows_the_clock(clock: str, charged: bool) -> None:
    """A 0.3 s nap costs the budget 0.3 s on a wall clock and next to nothing on a CPU clock."""
    game = load_game("tetress")
    info = GameInfo("g", "tetress", 0, ("RED", "BLUE"), time_per_game=10.0, clock=clock)
    driver = GameDriver(Napper, info, game, game.new_state())
    reply = driver.request(Clocks(time_left=10.0))
    assert reply.text is not None
    left = driver.env.clocks.time_left
    assert left is not None
    if charged:
        assert left <= 9.7
    else:
        assert left > 9.9
