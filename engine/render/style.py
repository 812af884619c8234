"""How each game's board is labelled and coloured, and which cells the last move filled.

Renderers only use the generic :meth:`State.grid` (one character per cell, top row first); a
:class:`BoardStyle` adds the game's coordinate labels and colours. Games without a style get
numbered rows and columns and a default palette.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.game import State

Cell = tuple[int, int]


@dataclass(frozen=True, slots=True)
class BoardStyle:
    """Labels and colours for one game's board.

    ``row_labels(height)`` and ``col_labels(width)`` give the label of each grid row (top row
    first) and column; ``fills`` maps grid characters to SVG colours and ``ansi`` to ANSI SGR
    codes; ``tokens`` draws filled cells as round tokens (Tetress) rather than square blocks.
    ``labels_below`` puts the column letters under the board (a Tetris well is read from the
    bottom) instead of above it. ``gravity`` says full rows are removed and what is above falls
    (ATT), so the last piece's cells are followed through the removal.
    """

    row_labels: Callable[[int], Sequence[str]]
    col_labels: Callable[[int], Sequence[str]]
    fills: dict[str, str] = field(default_factory=dict)
    ansi: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    tokens: bool = False
    labels_below: bool = False
    gravity: bool = False


def _numbers(count: int) -> list[str]:
    return [str(i) for i in range(count)]


def _from_bottom(count: int) -> list[str]:
    return [str(count - i) for i in range(count)]


def _tetris_columns(count: int) -> list[str]:
    letters = "abcdefghkm"
    return [letters[i] if i < len(letters) else str(i) for i in range(count)]


DEFAULT_STYLE = BoardStyle(
    row_labels=_numbers,
    col_labels=_numbers,
    fills={"#": "#4a5a70"},
    ansi={"#": "1;37"},
)

STYLES: dict[str, BoardStyle] = {
    "tetress": BoardStyle(
        row_labels=_numbers,
        col_labels=_numbers,
        fills={"r": "#d7263d", "b": "#1b6ec2"},
        ansi={"r": "1;31", "b": "1;34"},
        names={"r": "red", "b": "blue"},
        tokens=True,
    ),
    "att": BoardStyle(
        row_labels=_from_bottom,
        col_labels=_tetris_columns,
        fills={"#": "#5b6b82"},
        ansi={"#": "1;36"},
        names={"#": "block"},
        labels_below=True,
        gravity=True,
    ),
}

_FALLBACK_FILLS = ("#7a4fb5", "#2a9d8f", "#e9a23b", "#c8553d", "#3d5a80")


def board_style(game_name: str) -> BoardStyle:
    """The style registered for ``game_name``, or the generic numbered one."""
    return STYLES.get(game_name, DEFAULT_STYLE)


@dataclass(frozen=True, slots=True)
class BoardLayout:
    """What every renderer starts from: the style, the grid, its labels and the marked cells."""

    style: BoardStyle
    grid: list[str]
    height: int
    width: int
    marked: frozenset[Cell]
    rows: list[str]
    cols: list[str]


def board_layout(
    state: State[Any], highlight: Collection[Cell] | None, highlight_last: bool
) -> BoardLayout:
    """The layout of ``state``; marked cells are ``highlight`` if given, else (when
    ``highlight_last``) the cells of the last board move."""
    style = board_style(state.game.name)
    grid = state.grid()
    height = len(grid)
    width = len(grid[0]) if grid else 0
    if highlight is not None:
        marked = frozenset(highlight)
    elif highlight_last:
        marked = last_move_cells(state)
    else:
        marked = frozenset()
    return BoardLayout(
        style,
        grid,
        height,
        width,
        marked,
        list(style.row_labels(height)),
        list(style.col_labels(width)),
    )


def fill_for(style: BoardStyle, char: str) -> str:
    if char in style.fills:
        return style.fills[char]
    return _FALLBACK_FILLS[ord(char) % len(_FALLBACK_FILLS)]


def last_board_move(state: State[Any]) -> tuple[State[Any], Any] | None:
    """The position before the latest move that changed the board, and that move.

    Looks back at most two plies, so for ATT it finds the placer's drop even when the chooser
    has just named the next piece.
    """
    before = state.copy()
    after_grid = state.grid()
    for _ in range(min(2, len(state.history))):
        move = before.undo()
        if before.grid() != after_grid:
            return before, move
        after_grid = before.grid()
    return None


def last_move_cells(state: State[Any]) -> frozenset[Cell]:
    """Grid cells (row from the top, column) of the piece the latest board move put down.

    The piece's cells come from the move (``coords`` as ``(row, col)`` pairs, or ``cells`` as
    indices ``row * width + col``) or from the position (``state.cells(move)``); with the
    game's ``gravity`` they are followed through the removal of full rows (cells in removed
    rows are dropped), otherwise they stay where the piece was put even if a line removal
    emptied them. Without any of these the cells that went from empty to filled are used,
    provided the move removed nothing (else the answer is the empty set).
    """
    found = last_board_move(state)
    if found is None:
        return frozenset()
    before, move = found
    grid = before.grid()
    width = len(grid[0]) if grid else 0
    cells = _cells_of(before, move, width)
    if cells is None:
        return _grid_diff(grid, _after(before, move))
    if board_style(state.game.name).gravity:
        return _fall(grid, cells)
    return cells


def _cells_of(before: State[Any], move: Any, width: int) -> frozenset[Cell] | None:
    candidates: list[object] = [getattr(move, "coords", None)]
    indices = getattr(move, "cells", None)
    if indices is None and callable(getattr(before, "cells", None)):
        try:
            indices = before.cells(move)  # type: ignore[attr-defined]
        except Exception:  # a move type the method does not take: no cells from here
            indices = None
    if isinstance(indices, Iterable) and width:
        items = list(indices)
        if all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            candidates.append([divmod(i, width) for i in items])
    for value in candidates:
        cells = _as_cells(value)
        if cells:
            return cells
    return None


def _fall(grid: Sequence[str], cells: frozenset[Cell]) -> frozenset[Cell]:
    """Where ``cells``, added to ``grid``, end up once full rows go and the rest falls."""
    full = {
        r
        for r, row in enumerate(grid)
        if all(ch != "." or (r, c) in cells for c, ch in enumerate(row))
    }
    return frozenset((r + sum(1 for f in full if f > r), c) for r, c in cells if r not in full)


def _after(before: State[Any], move: Any) -> list[str]:
    after = before.copy()
    after.apply(move)
    return after.grid()


def _as_cells(value: object) -> frozenset[Cell] | None:
    if not isinstance(value, Iterable):
        return None
    cells: set[Cell] = set()
    for item in value:
        if not (
            isinstance(item, tuple) and len(item) == 2 and all(isinstance(v, int) for v in item)
        ):
            return None
        cells.add((item[0], item[1]))
    return frozenset(cells)


def _grid_diff(before: Sequence[str], after: Sequence[str]) -> frozenset[Cell]:
    added: set[Cell] = set()
    for r, (old_row, new_row) in enumerate(zip(before, after, strict=True)):
        for c, (old, new) in enumerate(zip(old_row, new_row, strict=True)):
            if old == new:
                continue
            if old != ".":
                return frozenset()  # something was removed or changed: cells have shifted
            added.add((r, c))
    return frozenset(added)
