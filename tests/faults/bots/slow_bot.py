"""An SDK bot that takes a known time over each move (random legal moves), so a game lasts
long enough for a test to cut its connection mid-game. ``SLOW_BOT_DELAY`` sets the delay."""

from __future__ import annotations

import os
import random
import time
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class SlowBot(Agent):
    """Sleeps ``SLOW_BOT_DELAY`` seconds (default 0.1), then plays a random legal move."""

    name = "slow"

    def __init__(self) -> None:
        self.rng = random.Random(11)
        self.delay = float(os.environ.get("SLOW_BOT_DELAY", "0.1"))

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        time.sleep(self.delay)
        return self.rng.choice(list(state.legal_moves))
