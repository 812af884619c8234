"""What a table knows: which bots a chain of games links, and which ratings rest on too little.

Two bots that never met, directly or through a chain of opponents, have no rating difference
at all: the fit's numbers for them are on two unrelated scales. :func:`connected_groups`
splits the players into the connected components of the games graph (networkx); tables
show each group apart and never compare across groups. A rating from fewer than
:data:`PROVISIONAL_GAMES` counted games is *provisional*, with the reason shown beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from referee.ratings.results import GameResult

if TYPE_CHECKING:
    import networkx as nx

#: Fewer counted games than this and a rating is provisional (shown as such, with the reason).
PROVISIONAL_GAMES = 20


def connected_groups(results: Iterable[GameResult], players: Sequence[str]) -> dict[str, int]:
    """``{player: group}``: groups numbered from 1, the largest first (ties by the first
    name); a player without counted games is a group of its own."""
    # Imported here: networkx takes longer to import than every other part of the ratings,
    # and most processes that import them (servers, the CLI) never build a table.
    import networkx as nx

    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(players)
    graph.add_edges_from((r.first, r.second) for r in results if r.counted)
    parts = sorted(
        (sorted(c) for c in nx.connected_components(graph)), key=lambda c: (-len(c), c[0])
    )
    return {p: number for number, part in enumerate(parts, start=1) for p in part}


def provisional_reason(games: int) -> str | None:
    """Why a rating from ``games`` counted games is provisional (``None``: it is not)."""
    if games == 0:
        return "no counted games"
    if games < PROVISIONAL_GAMES:
        return f"fewer than {PROVISIONAL_GAMES} counted games"
    return None
