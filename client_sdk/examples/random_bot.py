"""A bot that plays a uniformly random legal move (any registered game).

Run it: ``python -m client_sdk --server HOST:PORT --token T client_sdk.examples.random_bot``
"""

from __future__ import annotations

import random
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class RandomBot(Agent):
    """Picks one of the legal moves at random."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        return self.rng.choice(list(state.legal_moves))
