"""Negamax alpha-beta with iterative deepening, a transposition table and budgets.

The search is game-independent: an :class:`Evaluator` lists a position's moves (best guesses
first), plays and takes them back, and scores quiet positions from the side to move's point
of view. Wins and losses are ``±(WIN - ply)``, so a nearer win scores higher.

Budgets: ``max_nodes`` makes a level's strength independent of the machine (the same nodes give
the same move), ``max_time`` keeps a bot inside its clock. When a budget runs out mid-iteration
the best root move of that iteration is kept if the previous iteration's best was searched
already (it is searched first), else the previous iteration's answer stands.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

#: The score of a won position (minus the plies it takes).
WIN = 1_000_000.0
#: Node budgets of the fixed strength levels per game (see docs/tools.md for their calibrated
#: Elo). An ATT node costs several times a Tetress one (every drop is checked for reach).
LEVELS: dict[str, dict[int, int]] = {
    "tetress": {1: 1200, 2: 3000, 3: 8000},
    "att": {1: 200, 2: 800, 3: 2500},
}
#: Transposition-table entries kept before it is cleared (bounds the bot's memory).
TT_LIMIT = 200_000
_EXACT, _LOWER, _UPPER = 0, 1, 2


class Evaluator(Protocol):
    """What the search needs to know about a game."""

    def moves(self, state: Any) -> list[Any]: ...

    def play(self, state: Any, move: Any) -> None: ...

    def evaluate(self, state: Any) -> float: ...

    def engine_move(self, move: Any) -> Any: ...


class _Stop(Exception):
    """A budget ran out."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The chosen move, its score for the side to move, and what the search cost."""

    move: Any
    score: float
    depth: int
    nodes: int
    seconds: float
    #: Every root move's score from the deepest finished iteration (for annotation).
    root_scores: tuple[tuple[Any, float], ...] = ()

    @property
    def mate(self) -> bool:
        """Whether the score is a forced win or loss."""
        return abs(self.score) > WIN / 2


def terminal_score(state: Any, ply_from_root: int) -> float | None:
    """``±(WIN - ply)`` or 0 for a finished game, else ``None``."""
    outcome = state.outcome()
    if outcome is None:
        return None
    if outcome.winner is None:
        return 0.0
    value = WIN - ply_from_root
    return value if outcome.winner == state.to_move else -value


class Search:
    """One game's search; keeps its transposition table between moves."""

    def __init__(self, evaluator: Evaluator, seed: int | None = None) -> None:
        self.evaluator = evaluator
        self.rng = random.Random(seed)
        self.table: dict[int, tuple[int, float, int, Any]] = {}
        self.nodes = 0
        #: Per ply from the root, the last two moves that caused a cut-off (killer moves):
        #: a reply that refuted one move often refutes its siblings too.
        self.killers: dict[int, list[Any]] = {}
        self._max_nodes: int | None = None
        self._deadline: float | None = None

    def search(
        self,
        state: Any,
        *,
        max_nodes: int | None = None,
        max_time: float | None = None,
        max_depth: int = 64,
    ) -> SearchResult:
        """The best move found within the budgets (at least depth 1 is always finished)."""
        start = time.perf_counter()
        self.nodes = 0
        self._max_nodes = None
        self._deadline = None
        if len(self.table) > TT_LIMIT:
            self.table.clear()
        moves = self.evaluator.moves(state)
        if not moves:
            raise ValueError("no legal move to search")
        # Depth 1 unbounded: a bot always has a considered move, however small its budget.
        scores = self._root(state, moves, 1, None)
        ranked = _rank(moves, scores, self.rng)
        best_depth = 1
        self._max_nodes = max_nodes
        self._deadline = None if max_time is None else start + max_time
        for depth in range(2, max_depth + 1):
            if abs(scores[ranked[0]]) > WIN / 2 or len(moves) == 1:
                break
            if self._out_of_budget():
                break
            order = [moves[i] for i in ranked]
            partial: dict[int, float] = {}
            try:
                self._root(state, order, depth, partial)
            except _Stop:
                if 0 in partial:
                    # The previous best was searched at the new depth: the moves searched so
                    # far compete at that depth (scores of different depths do not compare).
                    done = {ranked[i]: v for i, v in partial.items()}
                    ranked = _rank_partial(done, self.rng)
                    scores = done
                break
            scores = {ranked[i]: partial[i] for i in range(len(order))}
            ranked = _rank(moves, scores, self.rng)
            best_depth = depth
        best = ranked[0]
        return SearchResult(
            move=moves[best],
            score=scores[best],
            depth=best_depth,
            nodes=self.nodes,
            seconds=time.perf_counter() - start,
            root_scores=tuple((moves[i], scores[i]) for i in ranked if i in scores),
        )

    def principal_variation(self, state: Any, first: Any, length: int) -> list[Any]:
        """The line the search expects after ``first`` (its chosen move in ``state``): the
        transposition table's best reply, position after position, at most ``length`` moves
        in all. ``state`` is left as it was."""
        line = [first]
        played = 0
        try:
            self.evaluator.play(state, first)
            played = 1
            while len(line) < length and state.outcome() is None:
                entry = self.table.get(state.zobrist)
                if entry is None or entry[3] is None:
                    break
                self.evaluator.play(state, entry[3])
                played += 1
                line.append(entry[3])
        finally:
            for _ in range(played):
                state.undo()
        return line

    def _out_of_budget(self) -> bool:
        if self._max_nodes is not None and self.nodes >= self._max_nodes:
            return True
        return self._deadline is not None and time.perf_counter() >= self._deadline

    def _root(
        self, state: Any, moves: list[Any], depth: int, partial: dict[int, float] | None
    ) -> dict[int, float]:
        """Every root move's score at ``depth`` (full window, so each score is exact)."""
        out: dict[int, float] = {}
        for index, move in enumerate(moves):
            self.evaluator.play(state, move)
            try:
                value = -self._negamax(state, depth - 1, -math.inf, math.inf, 1)
            finally:
                state.undo()
            out[index] = value
            if partial is not None:
                partial[index] = value
        return out

    def _negamax(self, state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.nodes += 1
        if (self.nodes & 31) == 0 and self._out_of_budget():
            raise _Stop
        done = terminal_score(state, ply)
        if done is not None:
            return done
        if depth <= 0:
            return self.evaluator.evaluate(state)
        key = state.zobrist
        entry = self.table.get(key)
        hint = None
        if entry is not None:
            e_depth, e_value, e_flag, hint = entry
            if e_depth >= depth:
                if e_flag == _EXACT:
                    return e_value
                if e_flag == _LOWER and e_value >= beta:
                    return e_value
                if e_flag == _UPPER and e_value <= alpha:
                    return e_value
        moves = self.evaluator.moves(state)
        for first in (*self.killers.get(ply, ()), hint):
            if first is not None and first in moves:
                moves.remove(first)
                moves.insert(0, first)
        original = alpha
        best = -math.inf
        best_move = None
        for move in moves:
            self.evaluator.play(state, move)
            try:
                value = -self._negamax(state, depth - 1, -beta, -alpha, ply + 1)
            finally:
                state.undo()
            if value > best:
                best, best_move = value, move
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        killers = self.killers.setdefault(ply, [])
                        if move not in killers:
                            killers.insert(0, move)
                            del killers[2:]
                        break
        flag = _UPPER if best <= original else _LOWER if best >= beta else _EXACT
        self.table[key] = (depth, best, flag, best_move)
        return best


def _rank(moves: list[Any], scores: dict[int, float], rng: random.Random) -> list[int]:
    """Move indices best first; equal scores in random order (so games vary)."""
    keys = {i: rng.random() for i in range(len(moves))}
    return sorted(range(len(moves)), key=lambda i: (-scores[i], keys[i]))


def _rank_partial(done: dict[int, float], rng: random.Random) -> list[int]:
    keys = {i: rng.random() for i in done}
    return sorted(done, key=lambda i: (-done[i], keys[i]))


def searcher_for(game_name: str, seed: int | None = None) -> Search:
    """The reference search for a registered game."""
    factory = _EVALUATORS.get(game_name)
    if factory is None:
        raise ValueError(f"no reference search for {game_name!r}")
    return Search(factory(), seed)


def _tetress() -> Evaluator:
    from client_sdk.reference.tetress_eval import TetressEvaluator

    return TetressEvaluator()


def _att() -> Evaluator:
    from client_sdk.reference.att_eval import AttEvaluator

    return AttEvaluator()


_EVALUATORS: dict[str, Callable[[], Evaluator]] = {"tetress": _tetress, "att": _att}
