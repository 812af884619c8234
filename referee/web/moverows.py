"""A stored game's per-move rows, for notebooks: ``/api/games/ID`` (``rows``) and
``referee game show --json`` (``moves``) give the same rows.

Each row: ``ply``, ``seat`` (its name), ``move`` (short notation), ``time_s`` (the referee's
wall time), ``memory_mb``, ``clock_s`` (left after the move), ``annotation``, ``comment``,
``search`` (the bot's think record, ``null`` when absent or not visible to the caller) and
``reference`` (the reference search's judgement, ``null`` until the game is analysed:
``eval`` and ``best`` from the mover's side, ``best_move``, ``glyph``, ``sentence``).
"""

from __future__ import annotations

from collections.abc import Mapping

from referee.analysis.gameeval import Analysis
from referee.web.replay import GameView
from referee.web.story import move_sentence


def move_rows(
    view: GameView, analysis: Analysis | None, hidden: frozenset[int] = frozenset()
) -> list[dict[str, object]]:
    """Every ply of ``view`` as one JSON-ready row; think records of ``hidden`` seats left out."""
    rows: list[dict[str, object]] = []
    for index, line in enumerate(view.moves):
        search = view.searches[index] if index < len(view.searches) else None
        judged = analysis.evals.get(line.ply) if analysis is not None else None
        reference: Mapping[str, object] | None = None
        if judged is not None:
            reference = {
                "eval": judged.played,
                "best": judged.best,
                "best_move": judged.best_move,
                "glyph": judged.glyph,
                "sentence": move_sentence(judged) if judged.glyph else None,
            }
        rows.append(
            {
                "ply": line.ply,
                "seat": line.seat_name,
                "move": line.move,
                "time_s": line.time_s,
                "memory_mb": None if line.memory_mb is None else round(line.memory_mb, 2),
                "clock_s": line.clock_s,
                "annotation": line.annotation,
                "comment": line.comment or None,
                "search": None if search is None or line.seat in hidden else search.as_json(),
                "reference": reference,
            }
        )
    return rows
