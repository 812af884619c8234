"""Never answers in time."""

from __future__ import annotations

import time
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class Sleepy(Agent):
    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        time.sleep(120)
        return next(iter(state.legal_moves))
