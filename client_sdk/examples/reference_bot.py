"""The reference search bot (any game with a reference search: Tetress and ATT).

Alpha-beta with iterative deepening and a Zobrist-keyed transposition table
(:mod:`client_sdk.reference`); it reports its depth, nodes, score and principal variation
with each move (a think record). Its strength is fixed by a node budget per move, so a level
plays the same on a fast or a slow machine and its calibrated Elo (``docs/tools.md``) stays
meaningful; the clock only ever makes it think *less* (it never loses on time).

Run a level: ``client_sdk.examples.reference_bot:Level1`` (``Level2``, ``Level3``);
``client_sdk.examples.reference_bot`` is level 2.
"""

from __future__ import annotations

from typing import Any

from client_sdk import Agent as SdkAgent
from client_sdk import Clocks
from client_sdk.reference import LEVELS, Search, searcher_for
from engine.game import State

#: Fraction of the per-move limit, and of the remaining clock per expected move, to use.
MOVE_LIMIT_SHARE = 0.4
#: Moves the clock is assumed to still have to cover (at least).
MOVES_AHEAD = 30


def time_budget(clocks: Clocks, ply: int) -> float | None:
    """Seconds this move may take: a share of the remaining clock and of the move limit."""
    budgets = []
    if clocks.time_left is not None:
        ahead = max(MOVES_AHEAD, 80 - ply // 2)
        budgets.append(clocks.time_left / ahead + 0.8 * clocks.increment)
    if clocks.move_limit is not None:
        budgets.append(MOVE_LIMIT_SHARE * clocks.move_limit)
    return max(0.0, min(budgets)) if budgets else None


class ReferenceBot(SdkAgent):
    """Searches each position within its level's node budget and the clock's share."""

    level = 2

    def __init__(self, seed: int | None = None) -> None:
        self.name = f"reference-L{self.level}"
        self.seed = seed
        self._search: Search | None = None
        self._game = ""

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        if self._search is None or self._game != state.game.name:
            self._search = searcher_for(state.game.name, self.seed)
            self._game = state.game.name
        result = self._search.search(
            state.copy(),
            max_nodes=LEVELS[state.game.name][self.level],
            max_time=time_budget(clocks, state.ply),
        )
        evaluator = self._search.evaluator
        line = self._search.principal_variation(state.copy(), result.move, result.depth)
        self.think(
            depth=result.depth,
            nodes=result.nodes,
            score=round(result.score, 3),
            pv=[evaluator.engine_move(m) for m in line],
        )
        return evaluator.engine_move(result.move)


class Level1(ReferenceBot):
    level = 1


class Level2(ReferenceBot):
    level = 2


class Level3(ReferenceBot):
    level = 3


#: What ``client_sdk.examples.reference_bot`` without ``:Level<n>`` runs.
Agent = Level2
