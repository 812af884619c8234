"""The placer's search against a deliberately naive model written from the rules text.

The model shares nothing with engine.att.search: pieces are rotated here from the letter
drawings, and every slide step and drop is tried one cell at a time over an explicit state
graph.
"""

from __future__ import annotations

import random
from collections import deque

import pytest

from engine.att import AsymmetricTetrisTactics, Choice, Drop
from engine.att.state import AttState

Cells = frozenset[tuple[int, int]]

LETTERS = {
    "I": ["#", "#", "#", "#"],
    "J": [".#", ".#", "##"],
    "L": ["#.", "#.", "##"],
    "O": ["##", "##"],
    "S": [".##", "##."],
    "T": ["###", ".#."],
    "Z": ["##.", ".##"],
}


def rotations(piece: str) -> list[Cells]:
    """The four quarter turns of a piece (duplicates included), normalised to (0, 0)."""
    cells = {
        (r, c) for r, row in enumerate(LETTERS[piece]) for c, ch in enumerate(row) if ch == "#"
    }
    out = []
    for _ in range(4):
        min_r = min(r for r, _ in cells)
        min_c = min(c for _, c in cells)
        out.append(frozenset((r - min_r, c - min_c) for r, c in cells))
        cells = {(c, -r) for r, c in cells}
    return out


def rests(board: list[str], piece: str) -> set[tuple[int, ...]]:
    """Every resting position (sorted cell indices, top row 0) reachable under the rules."""
    height, width = len(board), len(board[0])
    mids = {(width - 1) // 2, width // 2}

    def free(cells: Cells) -> bool:
        return all(0 <= r < height and 0 <= c < width and board[r][c] == "." for r, c in cells)

    def shift(cells: Cells, dr: int, dc: int) -> Cells:
        return frozenset((r + dr, c + dc) for r, c in cells)

    starts = set()
    for shape in rotations(piece):
        for dr in range(height):
            for dc in range(width):
                placed = shift(shape, dr, dc)
                if free(placed) and any(r == 0 and c in mids for r, c in placed):
                    starts.add(placed)
    seen: set[tuple[Cells, str]] = set()
    queue = deque((cells, "slide") for cells in starts)
    found = set()
    while queue:
        cells, phase = queue.popleft()
        if (cells, phase) in seen:
            continue
        seen.add((cells, phase))
        if phase == "slide":
            queue.append((cells, "drop"))
            for step in (-1, 1):
                moved = shift(cells, 0, step)
                while free(moved):
                    queue.append((moved, "drop"))
                    moved = shift(moved, 0, step)
        else:
            lower = shift(cells, 1, 0)
            if free(lower):
                queue.append((lower, "slide"))
            else:
                found.add(tuple(sorted(r * width + c for r, c in cells)))
    return found


# -- tests ------------------------------------------------------------------------------


def _state(board: list[str], piece: str | None = None) -> AttState:
    game = AsymmetricTetrisTactics(
        max_placer_turns=0, max_rows=0, width=len(board[0]), height=len(board)
    )
    state = game.state_from_string(f"{_compact(board)} C 0 0")
    if piece is not None:
        state.apply(Choice(piece))
    return state


def _compact(board: list[str]) -> str:
    out = []
    for row in board:
        text, empty = "", 0
        for ch in row:
            if ch == ".":
                empty += 1
                continue
            if empty:
                text += str(empty)
                empty = 0
            text += "#"
        out.append(text + (str(empty) if empty else ""))
    return "/".join(out)


def _engine_rests(state: AttState) -> set[tuple[int, ...]]:
    return {state.cells(m) for m in state.legal_moves if isinstance(m, Drop)}


def _random_board(rng: random.Random, width: int, height: int) -> list[str]:
    """Ragged stacks with overhangs, caves and the odd floating block."""
    rows = [["."] * width for _ in range(height)]
    stack = rng.randint(0, height - 3)
    for r in range(height - stack, height):
        for c in range(width):
            if rng.random() < 0.55:
                rows[r][c] = "#"
        if all(ch == "#" for ch in rows[r]):
            rows[r][rng.randrange(width)] = "."
    for _ in range(rng.randint(0, 4)):
        r, c = rng.randrange(1, height), rng.randrange(width)
        rows[r][c] = "#"
    return ["".join(row) for row in rows]


EMPTY = ["." * 10] * 20


@pytest.mark.parametrize(
    ("piece", "count"), [("I", 17), ("J", 34), ("L", 34), ("O", 9), ("S", 17), ("T", 34), ("Z", 17)]
)
def test_empty_well_rests_are_every_orientation_on_the_floor(piece: str, count: int) -> None:
    """On the empty well each distinct orientation can rest at every column of the floor."""
    state = _state(EMPTY, piece)
    assert len(state.legal_moves) == count
    assert _engine_rests(state) == rests(EMPTY, piece)


@pytest.mark.parametrize("width", [10, 5, 7])
def test_search_agrees_with_naive_model_on_random_wells(width: int) -> None:
    """The bitmask sweep finds exactly the resting positions of a step-by-step search."""
    rng = random.Random(width)
    for _ in range(12):
        board = _random_board(rng, width, 10)
        for piece in "IJLOSTZ":
            state = _state(board, piece)
            assert _engine_rests(state) == rests(board, piece), (board, piece)
            assert len(state.legal_moves) == len(rests(board, piece))


def test_witness_paths_follow_the_rules_step_by_step() -> None:
    """Every legal drop comes with an entry and slides that a referee can replay by hand."""
    rng = random.Random(7)
    for _ in range(10):
        board = _random_board(rng, 10, 14)
        for piece in "JSTI":
            state = _state(board, piece)
            for move in state.legal_moves:
                assert isinstance(move, Drop)
                assert _replay_path(state, move), (board, move)


def _replay_path(state: AttState, move: Drop) -> bool:
    """Replay the witness one cell at a time: legal entry, slides through empty cells only,
    each drop possible except the last, ending on the move's cells."""
    path = state.witness(move)
    grid = state.grid()
    height, width = len(grid), len(grid[0])

    def free(cells: set[tuple[int, int]]) -> bool:
        return all(0 <= r < height and 0 <= c < width and grid[r][c] == "." for r, c in cells)

    cells = {(r, c + path.entry_column) for r, c in rotations(move.piece)[path.orientation]}
    if not free(cells) or not any(r == 0 and c in (4, 5) for r, c in cells):
        return False
    for index, slide in enumerate(path.slides):
        step = 1 if slide > 0 else -1
        for _ in range(abs(slide)):
            cells = {(r, c + step) for r, c in cells}
            if not free(cells):
                return False
        lower = {(r + 1, c) for r, c in cells}
        blocked = not free(lower)
        if blocked != (index == len(path.slides) - 1):
            return False
        if not blocked:
            cells = lower
    return tuple(sorted(r * width + c for r, c in cells)) == state.cells(move)


def test_piece_slides_under_an_overhang_on_its_way_down() -> None:
    """A slide at a low row tucks the piece under a ledge it could not fall through."""
    board = ["." * 10] * 17 + ["#####.....", "..........", "#........#"]
    state = _state(board, "O")
    tucked = {(18 * 10 + 1, 18 * 10 + 2, 19 * 10 + 1, 19 * 10 + 2)}
    assert tucked <= _engine_rests(state)


def test_sealed_cave_is_unreachable() -> None:
    """A hole with a full roof cannot be reached, however the piece slides."""
    board = ["." * 10] * 18 + ["#########.", "#.......#."]
    state = _state(board, "I")
    assert all(cell < 190 or cell % 10 == 9 for move in _engine_rests(state) for cell in move)
    horizontal = Drop("I", 1, 1, 1)
    assert horizontal not in state.legal_moves
    assert state.cells(horizontal) == (191, 192, 193, 194)


def test_entry_needs_a_block_in_a_middle_column_of_the_top_row() -> None:
    """With the middle of row 2 walled off, an O (two rows tall) has no entry at all."""
    board = [".........."] + ["####..####"] + [".........."] * 18
    board[1] = "#########."
    state = _state(board, "O")
    assert len(state.legal_moves) == 0
    outcome = state.outcome()
    assert outcome is not None and outcome.winner == 0
    assert outcome.termination.value == "placer_has_no_entry"
    # An I can still lie flat in the top row, over the middle: the chooser wins next turn.
    flat = _state(board, "I")
    assert {m.row for m in flat.legal_moves if isinstance(m, Drop)} == {20}
