"""Raises when asked for a move."""

from __future__ import annotations

from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class Crashy(Agent):
    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        raise RuntimeError("lost my marbles")
