"""Judging moves by the reference search: the evaluation each move drops.

For each move the search scores the position before it (every legal move at one depth where
the budget allows) and the move played; the *drop* is the best score minus the played move's,
from the mover's side, in the game's evaluation units (Tetress: placements of mobility; ATT:
the placer-comfort scale). Thresholds (``THRESHOLDS``, also in ``docs/tools.md``):

* ``?!`` inaccuracy, ``?`` mistake, ``??`` blunder: the drop reaches the game's three limits;
  a move that turns a position not lost into a forced loss is always ``??``;
* Tetress thresholds are multiplied by ``legal moves / 40`` when a position has more than 40
  legal moves (its evaluation counts placements, so its swings grow with them);
* ``!``: the only move that keeps a forced win (every other move's score is not a win).

This is the one home of those marks: ``referee annotate``, the game pages' reference
evaluation and the lessons (:mod:`client_sdk.reference.lessons`) all judge with it. Book moves
(comment ``book``) are not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from client_sdk.reference.search import WIN, Search, searcher_for
from engine.records import GameRecord
from engine.records.replay import apply_recorded, initial_state

#: (inaccuracy, mistake, blunder) evaluation drops per game.
THRESHOLDS: Mapping[str, tuple[float, float, float]] = {
    "tetress": (6.0, 15.0, 30.0),
    "att": (3.0, 8.0, 16.0),
}
#: Legal moves above which Tetress thresholds grow in proportion (see threshold_scale).
MOBILITY_BASE = 40
#: Search nodes per position (between the reference bot's Tetress levels 1 and 2: 1200, 3000).
DEFAULT_NODES = 2000
#: The most good moves a judgement keeps (best first).
GOOD_MOVES = 8


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the search said about one move."""

    ply: int
    played: float
    best: float
    best_move: str
    glyph: str | None
    #: The deepest finished iteration of the search of the position before the move.
    depth: int = 0
    #: Moves (notation) the search rates within an inaccuracy of the best, with their scores,
    #: best first: playing any of them would not have been marked.
    good: tuple[tuple[str, float], ...] = ()

    @property
    def drop(self) -> float:
        return self.best - self.played


def threshold_scale(game: str, legal: int) -> float:
    """How much the thresholds grow in a position with ``legal`` moves: a Tetress evaluation
    counts placements, so its swings grow with the number of them (x legal/40 above 40)."""
    return max(1.0, legal / MOBILITY_BASE) if game == "tetress" else 1.0


def inaccuracy(game: str, legal: int) -> float:
    """The smallest drop that marks a move (``?!``) in a position with ``legal`` moves."""
    return threshold_scale(game, legal) * THRESHOLDS.get(game, THRESHOLDS["tetress"])[0]


def glyph_for(
    game: str, best: float, played: float, only_win: bool, scale: float = 1.0
) -> str | None:
    """The annotation for a move scoring ``played`` where ``best`` was possible."""
    if only_win:
        return "!"
    inaccurate, mistake, blunder = (scale * t for t in THRESHOLDS.get(game, THRESHOLDS["tetress"]))
    if played < -WIN / 2 < best:
        return "??"
    drop = best - played
    if abs(best) > WIN / 2 and abs(played) > WIN / 2:
        return None  # both win (or both lose): only how fast differs
    if drop >= blunder:
        return "??"
    if drop >= mistake:
        return "?"
    if drop >= inaccurate:
        return "?!"
    return None


def judge_position(state: Any, text: str, search: Search, nodes: int, ply: int) -> Judgement:
    """The judgement of the move ``text`` (long form) in ``state`` (left unchanged)."""
    evaluator = search.evaluator
    result = search.search(state.copy(), max_nodes=nodes)
    scores = {state.game.move_to_text(evaluator.engine_move(m)): v for m, v in result.root_scores}
    played = scores.get(text)
    best = result.score
    if played is None or (len(scores) < len(state.legal_moves) and played < best):
        # Not scored at the root's depth: score the played and the best move alike, each
        # by a search of its reply position (scores of different depths do not compare).
        played = reply_score(search, state, text, nodes)
        best_text_long = state.game.move_to_text(evaluator.engine_move(result.move))
        best = reply_score(search, state, best_text_long, nodes)
    best = max(best, played)
    wins = [v for v in scores.values() if v > WIN / 2]
    only_win = played > WIN / 2 and len(wins) == 1 and len(scores) == len(state.legal_moves) > 1
    game = state.game.name
    scale = threshold_scale(game, len(state.legal_moves))
    glyph = glyph_for(game, best, played, only_win, scale)
    floor = best - inaccuracy(game, len(state.legal_moves))
    good = [
        (state.san(evaluator.engine_move(m)), float(v)) for m, v in result.root_scores if v >= floor
    ][:GOOD_MOVES]
    best_san = state.san(evaluator.engine_move(result.move))
    if not good:
        good = [(best_san, float(best))]
    return Judgement(ply, played, best, best_san, glyph, result.depth, tuple(good))


def judge(
    record: GameRecord,
    *,
    nodes: int = DEFAULT_NODES,
    progress: Callable[[Judgement], None] | None = None,
) -> list[Judgement]:
    """Every judged move of ``record`` (book moves and moves after the end are not judged)."""
    return [j for j, _ in judge_moves(record, nodes=nodes, progress=progress) if j is not None]


def judge_moves(
    record: GameRecord,
    *,
    nodes: int = DEFAULT_NODES,
    progress: Callable[[Judgement], None] | None = None,
) -> Iterator[tuple[Judgement | None, int]]:
    """Per move of ``record`` in order: its judgement (``None``: not judged) and its index."""
    state = initial_state(record)
    search = searcher_for(record.game, seed=0)
    for index, recorded in enumerate(record.moves):
        found = None
        if recorded.comment != "book" and not state.is_over():
            text = state.game.move_to_text(state.parse_san(recorded.san))
            found = judge_position(state, text, search, nodes, index + 1)
            if progress is not None:
                progress(found)
        yield found, index
        apply_recorded(state, recorded, index + 1)


def reply_score(search: Search, state: Any, text: str, nodes: int) -> float:
    """The mover's score of ``text``: minus the reply position's score (exact if it ends)."""
    child = state.copy()
    child.apply(child.game.move_from_text(text))
    done = child.outcome()
    if done is not None:
        return 0.0 if done.winner is None else WIN if done.winner != child.to_move else -WIN
    return float(-search.search(child, max_nodes=nodes).score)
