"""The sleepy constructor (see the package's docstring)."""

from __future__ import annotations

import os
import random
import time
from typing import Any

from client_sdk.examples.course_random.program import legal_actions
from referee.game import Board, PlaceAction, PlayerColor


class Agent:
    """``__init__`` sleeps first, as a bot loading tables or warming a search would."""

    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        time.sleep(float(os.environ.get("SLEEPY_INIT_S", "1.0")))
        self._color = color
        self._board = Board()
        self._rng = random.Random(5)

    def action(self, **referee: Any) -> PlaceAction:
        return self._rng.choice(legal_actions(self._board, self._color))

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self._board.apply_action(action)


class SlowMover(Agent):
    """The other way round: made at once, then sleeps ``SLOW_MOVE_S`` seconds (default 1.2)
    before each action (an opponent that thinks long while the sleepy one is made)."""

    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self._color = color
        self._board = Board()
        self._rng = random.Random(6)

    def action(self, **referee: Any) -> PlaceAction:
        time.sleep(float(os.environ.get("SLOW_MOVE_S", "1.2")))
        return super().action(**referee)
