"""A bot that prints a few lines every move and, on its third move, dies of an uncaught
exception raised three calls deep (a traceback longer than a few lines)."""

from __future__ import annotations

import random
import sys
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


def _deeper(depth: int) -> None:
    if depth == 0:
        raise RuntimeError("the evaluation table is empty")
    _deeper(depth - 1)


class ChattyCrashBot(Agent):
    name = "chatty_crash"

    def __init__(self) -> None:
        self.moves = 0

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        self.moves += 1
        for line in range(5):
            print(f"thinking about move {self.moves}, line {line}", file=sys.stderr)
        if self.moves == 3:
            _deeper(3)
        return random.choice(list(state.legal_moves))
