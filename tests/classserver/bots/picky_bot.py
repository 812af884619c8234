"""A bot whose author decides each challenge: it plays alice's bots only. With the environment
variable ``PICKY_HOLD`` naming a file, it answers only once that file exists (a slow answer
keeps the challenge open)."""

from __future__ import annotations

import os
import time
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class PickyBot(Agent):
    name = "picky"

    def accept_challenge(self, challenger: str, game: str) -> bool:
        hold = os.environ.get("PICKY_HOLD")
        while hold and not os.path.exists(hold):
            time.sleep(0.05)
        print(f"asked by {challenger} to play {game}", flush=True)
        return challenger.startswith("alice/")

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        return next(iter(state.legal_moves))
