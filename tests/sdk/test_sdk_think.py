"""An SDK agent's think record, as the SDK prepares it for the referee: the PV turned into the
game's notation, parts out of range left out, and a broken record never costing the move."""

from __future__ import annotations

import math
from typing import Any

from client_sdk import Agent, Clocks, GameInfo, Think
from client_sdk._driver import GameDriver
from engine.game import State
from engine.registry import load_game


class Thinker(Agent):
    def __init__(self, think: dict[str, Any]) -> None:
        self.parts = think

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        first = next(iter(state.legal_moves))
        after = state.copy()
        after.apply(first)
        reply = next(iter(after.legal_moves))
        pv = self.parts.pop("pv", [first, state.game.move_to_text(reply), "nonsense"])
        self.think(pv=pv, **self.parts)
        return first


def _reply(think: dict[str, Any]) -> Any:
    game = load_game("tetress")
    info = GameInfo("g", "tetress", 0, game.seat_names)
    driver = GameDriver(lambda: Thinker(think), info, game, game.new_state())
    return driver, driver.request(Clocks(time_left=10.0))


def test_the_pv_is_sent_in_the_games_notation() -> None:
    """Engine moves and long-form texts become short notation played out from the position;
    from a move that cannot be played the bot's own text is kept."""
    driver, reply = _reply({"depth": 3, "nodes": 99, "score": 1.25, "text": "  two   words "})
    assert reply.text is not None and reply.think is not None
    state = driver.game.new_state()
    first = driver.game.move_from_text(reply.text)
    assert reply.think.pv[0] == state.san(first)
    state.apply(first)
    assert reply.think.pv[1] == state.san(next(iter(state.legal_moves)))
    assert reply.think.pv[2] == "nonsense"
    assert (reply.think.depth, reply.think.nodes, reply.think.score) == (3, 99, 1.25)
    assert reply.think.text == "two words"


def test_parts_out_of_range_are_left_out_and_a_bad_record_costs_nothing() -> None:
    """A NaN score, a negative depth and a PV that raises are dropped; the move still goes."""

    class Boom:
        def __str__(self) -> str:
            raise RuntimeError("no text")

    _, reply = _reply({"depth": -1, "score": math.nan, "pv": [Boom()]})
    assert reply.text is not None and reply.error is None and reply.think is None
    _, reply = _reply({"score": 10**12, "nodes": 5, "pv": []})
    assert reply.think is not None and reply.think.score is None and reply.think.nodes == 5


def test_think_is_a_value_type() -> None:
    """``Think`` is exported for course agents to set as ``self.think_record``."""
    assert Think(depth=1).depth == 1
