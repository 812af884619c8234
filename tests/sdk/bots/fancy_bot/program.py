"""A course-style bot with the habits real ones have: NumPy, a sibling module imported
relatively, a helper package beside it, and print()."""

from __future__ import annotations

from typing import Any

import numpy as np
from botkit import free_neighbours

from referee.game import Board, PlaceAction, PlayerColor

from .strategy import candidate_actions


class Agent:
    def __init__(self, color: PlayerColor, **referee: Any):
        self._color = color
        self._board = Board()
        self._rng = np.random.default_rng(7)
        print(f"fancy_bot: playing {color}, {referee['time_remaining']:.0f} s on the clock")

    def action(self, **referee: Any) -> PlaceAction:
        actions = candidate_actions(self._board, self._color, free_neighbours)
        choice = actions[int(self._rng.integers(len(actions)))]
        print(f"fancy_bot: {len(actions)} candidates, playing {choice}")
        return choice

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self._board.apply_action(action)
