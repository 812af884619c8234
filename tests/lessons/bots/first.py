"""Plays the first legal move in notation order, once it has heard every move of the game
so far (else it returns nothing: an illegal answer)."""

from __future__ import annotations

from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class First(Agent):
    def __init__(self) -> None:
        self.heard = 0

    def on_move(self, seat: int, move: Any, state: State[Any]) -> None:
        self.heard += 1

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        if self.heard != state.ply:
            return None
        return state.parse_san(min(state.san(m) for m in list(state.legal_moves)))
