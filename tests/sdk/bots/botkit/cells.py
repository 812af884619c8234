"""Cell helpers for the fixture bot."""

from __future__ import annotations

from referee.game import Board, Coord, Direction


def free_neighbours(board: Board, cell: Coord) -> list[Coord]:
    """The empty cells next to ``cell`` (wrapping)."""
    return [cell + d for d in Direction if board[cell + d].player is None]
