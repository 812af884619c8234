"""An SDK bot that burns a fixed amount of CPU time per move, then plays a legal move chosen by a
fixed-seed generator from the moves in a fixed order (so two games between two of it are the
same game).

The burn is measured CPU: it loops until its own process has used ``BURN_S`` more CPU seconds,
however long that takes on the wall clock. Each move runs pinned to the lowest-numbered core
the bot may use, so a test can load exactly that core.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State

BURN_S = 0.05


class BurnBot(Agent):
    """Burns ``BURN_S`` CPU seconds, then plays a seeded choice of legal move."""

    name = "burn"

    def __init__(self) -> None:
        self.rng = random.Random(11)

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        start = time.process_time()
        while time.process_time() - start < BURN_S:
            pass
        return self.rng.choice(sorted(state.legal_moves, key=repr))
