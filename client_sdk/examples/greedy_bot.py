"""A greedy one-ply bot (any registered game): it tries every legal move and keeps the one
after which the opponent has the fewest replies, wins outright when it can, and breaks ties
by material (its tokens minus the opponent's) and then at random.

Run it: ``python -m client_sdk --server HOST:PORT --token T client_sdk.examples.greedy_bot``
"""

from __future__ import annotations

import math
import random
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class GreedyBot(Agent):
    """One-ply search: minimise the opponent's mobility."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        me = state.to_move
        best: list[Any] = []
        best_score = -math.inf
        for move in list(state.legal_moves):
            state.apply(move)
            score = evaluate(state, me)
            state.undo()
            if score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return self.rng.choice(best)


def evaluate(state: State[Any], me: int) -> float:
    """How good ``state`` is for seat ``me``: a win is infinite, else fewer opponent moves."""
    outcome = state.outcome()
    if outcome is not None:
        if outcome.winner is None:
            return 0.0
        return math.inf if outcome.winner == me else -math.inf
    replies = len(state.legal_moves)
    mobility = -replies if state.to_move != me else replies
    return mobility + material(state, me) / 1000


def material(state: State[Any], me: int) -> int:
    """Own tokens minus the opponent's, for games whose grid marks seats ``r``/``b``."""
    cells = "".join(state.grid())
    mine, theirs = ("r", "b") if me == 0 else ("b", "r")
    return cells.count(mine) - cells.count(theirs)
