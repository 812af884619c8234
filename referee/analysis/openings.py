"""Making openings books (``referee openings generate``): balanced starting sequences.

:func:`generate` plays random legal moves for a few plies and keeps positions that the
reference search, at a fixed node budget, scores close to the start position (from the first
seat's side; an asymmetric game's start is not 0 in evaluation units), are not over, and were
not found already (Zobrist hash). The shipped books were made with the command each one
records; ``docs/tools.md`` gives it. The book itself (its format, loading, picking an opening)
is :mod:`engine.records.openings`, where the referee and the SDK both read it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.errors import BookError
from engine.game import Game
from engine.records.openings import Book, Opening

#: |eval| a generated opening may have (in each game's evaluation units) to count as balanced.
BALANCE_LIMIT: Mapping[str, float] = {"tetress": 6.0, "att": 4.0}
#: Games whose seats have different roles: balance is judged against the start's own score.
ASYMMETRIC = frozenset({"att"})
#: Nodes the reference search spends judging each candidate position.
JUDGE_NODES = 1500


def generate(
    game: Game[Any],
    count: int,
    plies: int,
    *,
    seed: int = 1,
    nodes: int = JUDGE_NODES,
    limit: float | None = None,
    command: str = "",
    max_tries: int | None = None,
) -> Book:
    """A new book of ``count`` balanced openings ``plies`` moves deep (see the module doc)."""
    from client_sdk.reference import searcher_for

    rng = random.Random(seed)
    bound = BALANCE_LIMIT.get(game.name, 5.0) if limit is None else limit
    search = searcher_for(game.name, seed)
    # "Balanced" is judged against the start position's own score (from seat 0's side): in an
    # asymmetric game (ATT) the start is not even in evaluation units, and sides swap anyway.
    center = 0.0
    if game.name in ASYMMETRIC:
        center = search.search(game.new_state(), max_nodes=nodes).score
    found: list[Opening] = []
    seen: set[int] = set()
    tries = 0
    while len(found) < count:
        tries += 1
        if max_tries is not None and tries > max_tries:
            raise BookError(f"found only {len(found)} balanced openings in {max_tries} tries")
        state = game.new_state()
        moves: list[str] = []
        for _ in range(plies):
            legal = list(state.legal_moves)
            if not legal:
                break
            move = rng.choice(legal)
            moves.append(game.move_to_text(move))
            state.apply(move)
        if len(moves) < plies or state.is_over() or state.zobrist in seen:
            continue
        seen.add(state.zobrist)
        value = search.search(state.copy(), max_nodes=nodes).score
        if abs((value if state.to_move == 0 else -value) - center) > bound:
            continue
        number = len(found) + 1
        found.append(Opening(f"{game.name}-{number:03d}", tuple(moves), state.to_string(), value))
    return Book(game.name, dict(game.params), tuple(found), command)
