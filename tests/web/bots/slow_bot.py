"""A bot that waits a little before each random move, so a spectator can follow its games."""

from __future__ import annotations

import os
import random
import time
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class SlowBot(Agent):
    name = "slow"

    def __init__(self) -> None:
        self.rng = random.Random(7)
        self.delay = float(os.environ.get("SLOW_BOT_DELAY", "0.15"))

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        time.sleep(self.delay)
        return self.rng.choice(list(state.legal_moves))
