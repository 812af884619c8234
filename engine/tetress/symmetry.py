"""The symmetries of Tetress, and one representative of each class of equivalent lines.

The board is a torus, so shifting every cell by the same rows and columns (wrapping) changes
nothing the rules look at. The rules are also blind to the square's rotations and reflections:
the 19 fixed tetrominoes are every rotation and mirror image of the seven shapes, rows and
columns are cleared alike, and adjacency is the four neighbours. So a line of moves and its
image under any of the 121 translations times the 8 rotations and reflections (968 maps) lead
to the same game, move for move, with the same seats; colours are never swapped.

:func:`canonical_line` picks one representative: the image whose moves, compared one after the
other by their sorted cell indices, come first. That order compares a line's first moves first,
so the representative of a line begins with the representative of its first moves: a tree of
canonical lines is a tree of opening classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.tetress.geometry import N
from engine.tetress.placement import Placement

Cell = tuple[int, int]
#: The square's rotations and reflections about cell (0, 0), on torus coordinates.
TURNS: tuple[Callable[[int, int], Cell], ...] = (
    lambda r, c: (r, c),
    lambda r, c: (c, -r % N),
    lambda r, c: (-r % N, -c % N),
    lambda r, c: (-c % N, r),
    lambda r, c: (r, -c % N),
    lambda r, c: (-r % N, c),
    lambda r, c: (c, r),
    lambda r, c: (-c % N, -r % N),
)

#: A map of the board: a turn (index into :data:`TURNS`), then a shift of rows and columns.
Symmetry = tuple[int, int, int]


def image(move: Placement, symmetry: Symmetry) -> tuple[int, ...]:
    """The sorted cell indices of ``move`` under ``symmetry``."""
    turn, dr, dc = symmetry
    cells = []
    for index in move.cells:
        r, c = TURNS[turn](*divmod(index, N))
        cells.append(((r + dr) % N) * N + (c + dc) % N)
    return tuple(sorted(cells))


def canonical_line(moves: Sequence[Placement]) -> tuple[Placement, ...]:
    """The representative of every line equal to ``moves`` up to the board's symmetries (see
    the module's docstring); the empty line for no moves."""
    if not moves:
        return ()
    # The least image of the first move has cell 0 first, so only the maps sending one of its
    # cells to (0, 0) can be least: 8 turns times 4 cells, not all 968 maps.
    candidates: list[Symmetry] = []
    for turn, rotate in enumerate(TURNS):
        for index in moves[0].cells:
            r, c = rotate(*divmod(index, N))
            candidates.append((turn, -r % N, -c % N))
    chosen: list[tuple[int, ...]] = []
    for move in moves:
        images = {symmetry: image(move, symmetry) for symmetry in candidates}
        least = min(images.values())
        candidates = [s for s in candidates if images[s] == least]
        chosen.append(least)
    return tuple(Placement.from_cells(cells) for cells in chosen)


def equivalent(a: Sequence[Placement], b: Sequence[Placement]) -> bool:
    """Whether two lines are the same up to the board's symmetries."""
    return canonical_line(a) == canonical_line(b)
