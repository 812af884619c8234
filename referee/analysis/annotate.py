"""Annotating a record: the reference search judges every move by the evaluation it drops.

For each move the search scores the position before it (every legal move at one depth where
the budget allows) and the move played; the *drop* is the best score minus the played move's,
from the mover's side, in the game's evaluation units (Tetress: placements of mobility; ATT:
the placer-comfort scale). Thresholds (``THRESHOLDS``, also in ``docs/tools.md``):

* ``?!`` inaccuracy, ``?`` mistake, ``??`` blunder: the drop reaches the game's three limits;
  a move that turns a position not lost into a forced loss is always ``??``;
* Tetress thresholds are multiplied by ``legal moves / 40`` when a position has more than 40
  legal moves (its evaluation counts placements, so its swings grow with them);
* ``!``: the only move that keeps a forced win (every other move's score is not a win).

The verdict goes into the record in its own syntax: the move's annotation glyph, and a
comment ``eval=<played> best=<best score> | best: <move>`` kept beside any measurements.
Book moves (comment ``book``) are not judged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from client_sdk.reference import WIN, searcher_for
from engine.records import GameRecord, RecordedMove
from engine.records.replay import apply_recorded, initial_state

#: (inaccuracy, mistake, blunder) evaluation drops per game.
THRESHOLDS: Mapping[str, tuple[float, float, float]] = {
    "tetress": (6.0, 15.0, 30.0),
    "att": (3.0, 8.0, 16.0),
}
#: Legal moves above which Tetress thresholds grow in proportion (see threshold_scale).
MOBILITY_BASE = 40
#: Search nodes per position (the reference bot's level 2 budget).
DEFAULT_NODES = 2000


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the search said about one move."""

    ply: int
    played: float
    best: float
    best_move: str
    glyph: str | None

    @property
    def drop(self) -> float:
        return self.best - self.played


def threshold_scale(game: str, legal: int) -> float:
    """How much the thresholds grow in a position with ``legal`` moves: a Tetress evaluation
    counts placements, so its swings grow with the number of them (x legal/40 above 40)."""
    return max(1.0, legal / MOBILITY_BASE) if game == "tetress" else 1.0


def glyph_for(
    game: str, best: float, played: float, only_win: bool, scale: float = 1.0
) -> str | None:
    """The annotation for a move scoring ``played`` where ``best`` was possible."""
    if only_win:
        return "!"
    inaccuracy, mistake, blunder = (scale * t for t in THRESHOLDS.get(game, THRESHOLDS["tetress"]))
    if played < -WIN / 2 < best:
        return "??"
    drop = best - played
    if abs(best) > WIN / 2 and abs(played) > WIN / 2:
        return None  # both win (or both lose): only how fast differs
    if drop >= blunder:
        return "??"
    if drop >= mistake:
        return "?"
    if drop >= inaccuracy:
        return "?!"
    return None


def annotate(
    record: GameRecord,
    *,
    nodes: int = DEFAULT_NODES,
    progress: Callable[[Judgement], None] | None = None,
) -> tuple[GameRecord, list[Judgement]]:
    """The record with every judged move annotated, and the judgements."""
    state = initial_state(record)
    search = searcher_for(record.game, seed=0)
    evaluator = search.evaluator
    moves: list[RecordedMove] = []
    judgements: list[Judgement] = []
    for index, recorded in enumerate(record.moves):
        if recorded.comment == "book" or state.is_over():
            moves.append(recorded)
            apply_recorded(state, recorded, index + 1)
            continue
        text = state.game.move_to_text(state.parse_san(recorded.san))
        result = search.search(state.copy(), max_nodes=nodes)
        scores = {
            state.game.move_to_text(evaluator.engine_move(m)): v for m, v in result.root_scores
        }
        played = scores.get(text)
        best = result.score
        if played is None or (len(scores) < len(state.legal_moves) and played < best):
            # Not scored at the root's depth: score the played and the best move alike, each
            # by a search of its reply position (scores of different depths do not compare).
            played = _reply_score(search, state, text, nodes)
            best_text_long = state.game.move_to_text(evaluator.engine_move(result.move))
            best = _reply_score(search, state, best_text_long, nodes)
        best = max(best, played)
        wins = [v for v in scores.values() if v > WIN / 2]
        only_win = played > WIN / 2 and len(wins) == 1 and len(scores) == len(state.legal_moves) > 1
        scale = threshold_scale(record.game, len(state.legal_moves))
        glyph = glyph_for(record.game, best, played, only_win, scale)
        best_text = state.san(evaluator.engine_move(result.move))
        judgement = Judgement(index + 1, played, best, best_text, glyph)
        judgements.append(judgement)
        if progress is not None:
            progress(judgement)
        moves.append(_marked(recorded, judgement))
        apply_recorded(state, recorded, index + 1)
    return dataclasses.replace(record, moves=tuple(moves)), judgements


def _reply_score(search: Any, state: Any, text: str, nodes: int) -> float:
    """The mover's score of ``text``: minus the reply position's score (exact if it ends)."""
    child = state.copy()
    child.apply(child.game.move_from_text(text))
    done = child.outcome()
    if done is not None:
        return 0.0 if done.winner is None else WIN if done.winner != child.to_move else -WIN
    return float(-search.search(child, max_nodes=nodes).score)


def _score_text(value: float) -> str:
    if value > WIN / 2:
        return f"+W{int(WIN - value)}"
    if value < -WIN / 2:
        return f"-W{int(WIN + value)}"
    return f"{value:+.1f}"


def _marked(move: RecordedMove, judgement: Judgement) -> RecordedMove:
    extra = [(k, v) for k, v in move.extra if k not in ("eval", "best")]
    extra += [("eval", _score_text(judgement.played)), ("best", _score_text(judgement.best))]
    comment = move.comment
    if judgement.glyph in ("?!", "?", "??") and judgement.best_move != move.san:
        note = f"best: {judgement.best_move}"
        comment = f"{comment}; {note}" if comment else note
    return dataclasses.replace(
        move, annotation=judgement.glyph or move.annotation, extra=tuple(extra), comment=comment
    )
