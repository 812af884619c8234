"""The reference search bots' brains: alpha-beta with iterative deepening and a transposition
table keyed by the engine's Zobrist hash, with one evaluation per game.

:func:`searcher_for` gives the search for a game; ``client_sdk.examples.reference_bot`` wraps
it as bots at fixed strength levels; ``referee annotate`` runs it on every position of a record.
"""

from client_sdk.reference.search import (
    LEVELS,
    WIN,
    Search,
    SearchResult,
    searcher_for,
)

__all__ = ["LEVELS", "WIN", "Search", "SearchResult", "searcher_for"]
