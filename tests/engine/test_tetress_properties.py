"""Property tests: invariants of Tetress positions under random play, against a naive model."""

from __future__ import annotations

import random
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tetress import Placement, Tetress, TetressState, random_move
from engine.tetress.zobrist import position_key

N = 11
# The course's offsets (docs: shared/compat/course-agent-api.md), kept independent of the engine.
OFFSETS = (
    ((0, 0), (0, 1), (1, 0), (1, 1)),
    ((0, 0), (0, 1), (0, 2), (0, 3)),
    ((0, 0), (1, 0), (2, 0), (3, 0)),
    ((-1, -1), (-1, 0), (-1, 1), (0, 0)),
    ((-1, 1), (0, 0), (0, 1), (1, 1)),
    ((0, 0), (1, -1), (1, 0), (1, 1)),
    ((-1, -1), (0, -1), (0, 0), (1, -1)),
    ((-2, -1), (-1, -1), (0, -1), (0, 0)),
    ((-1, 0), (-1, 1), (-1, 2), (0, 0)),
    ((0, 0), (0, 1), (1, 1), (2, 1)),
    ((0, 0), (1, -2), (1, -1), (1, 0)),
    ((-2, 1), (-1, 1), (0, 0), (0, 1)),
    ((0, 0), (1, 0), (1, 1), (1, 2)),
    ((0, -1), (0, 0), (1, -1), (2, -1)),
    ((-1, -2), (-1, -1), (-1, 0), (0, 0)),
    ((-1, 1), (-1, 2), (0, 0), (0, 1)),
    ((-2, -1), (-1, -1), (-1, 0), (0, 0)),
    ((-1, -2), (-1, -1), (0, -1), (0, 0)),
    ((0, 0), (1, -1), (1, 0), (2, -1)),
)
ALL_PLACEMENTS = sorted(
    {
        frozenset(((r + dr) % N, (c + dc) % N) for dr, dc in offsets)
        for offsets in OFFSETS
        for r in range(N)
        for c in range(N)
    },
    key=sorted,
)


def board_of(state: TetressState) -> dict[tuple[int, int], str]:
    return {(r, c): ch for r, row in enumerate(state.grid()) for c, ch in enumerate(row)}


def naive_legal(state: TetressState) -> set[frozenset[tuple[int, int]]]:
    """Every placement tried against the board with plain set logic."""
    if state.ply >= state.game.turn_limit:
        return set()
    board = board_of(state)
    own = "rb"[state.to_move]
    first = state.ply < 2
    legal = set()
    for cells in ALL_PLACEMENTS:
        if any(board[cell] != "." for cell in cells):
            continue
        if first or any(
            board[((r + dr) % N, (c + dc) % N)] == own
            for r, c in cells
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
        ):
            legal.add(cells)
    return legal


def full_lines(board: dict[tuple[int, int], str]) -> list[str]:
    rows = [f"row {r}" for r in range(N) if all(board[r, c] != "." for c in range(N))]
    cols = [f"col {c}" for c in range(N) if all(board[r, c] != "." for r in range(N))]
    return rows + cols


def test_naive_model_has_2299_placements() -> None:
    """The independent model agrees that there are 2299 distinct placements."""
    assert len(ALL_PLACEMENTS) == 2299


def random_states(seed: int, plies: int, limit: int = 150) -> list[TetressState]:
    """Copies of every position along one random game of at most ``plies`` actions."""
    rng = random.Random(seed)
    state = Tetress(turn_limit=limit).new_state()
    states = [state.copy()]
    for _ in range(plies):
        if state.outcome() is not None:
            break
        state.apply(random_move(state, rng))
        states.append(state.copy())
    return states


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), plies=st.integers(0, 120))
def test_legal_view_agrees_with_naive_model(seed: int, plies: int) -> None:
    """len, iteration and ``in`` of legal_moves match a naive check of all 2299 placements."""
    state = random_states(seed, plies)[-1]
    expected = naive_legal(state)
    view = state.legal_moves
    got = [frozenset(p.coords) for p in view]
    assert len(got) == len(set(got)) == len(view)
    assert set(got) == expected
    for cells in ALL_PLACEMENTS[:: 7 + seed % 5]:
        move = Placement.from_cells(cells)
        assert (move in view) == (cells in expected)
    assert (state.outcome() is None) == bool(expected)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), plies=st.integers(1, 150))
def test_apply_keeps_counts_removes_full_lines_and_undo_restores(seed: int, plies: int) -> None:
    """Each action adds 4 tokens minus the removed full lines; undo restores string and hash."""
    states = random_states(seed, plies)
    game = states[0].game
    for before, after in pairwise(states):
        move = after.history[-1]
        board = board_of(before)
        for r, c in move.coords:
            board[r, c] = "rb"[before.to_move]
        lines = full_lines(board)
        removed = {cell for cell in board if f"row {cell[0]}" in lines or f"col {cell[1]}" in lines}
        for cell in removed:
            board[cell] = "."
        assert board == board_of(after)
        assert not full_lines(board_of(after))
        assert sum(after.token_counts) == sum(before.token_counts) + 4 - len(removed)
        assert after.ply == before.ply + 1 and after.to_move != before.to_move
        assert after.zobrist == position_key(after.red_mask, after.blue_mask, after.ply)
        undone = after.copy()
        assert undone.undo() == move
        assert undone.to_string() == before.to_string()
        assert undone.zobrist == before.zobrist
        again = game.state_from_string(after.to_string())
        assert again.to_string() == after.to_string()
        assert again.zobrist == after.zobrist
        assert again.token_counts == after.token_counts
    last = states[-1]
    assert len(last.history) == last.ply
    while last.history:
        last.undo()
    assert last.to_string() == states[0].to_string()
    assert last.zobrist == states[0].zobrist


@settings(max_examples=200, deadline=None)
@given(
    cells=st.lists(st.integers(0, 120), min_size=4, max_size=4, unique=True),
    spaces=st.lists(st.sampled_from(["", " ", "  ", "\t"]), min_size=10, max_size=10),
    pairs=st.booleans(),
)
def test_notation_round_trip(cells: list[int], spaces: list[str], pairs: bool) -> None:
    """Any four cells, printed in any order with any spacing in either form, parse back."""
    move = Placement.from_cells(cells)
    assert Placement.parse(str(move)) == move
    coords = [divmod(i, N) for i in cells]
    s = spaces
    if pairs:
        body = ",".join(f"{s[i]}({r}{s[i + 1]},{c}){s[i + 2]}" for i, (r, c) in enumerate(coords))
        text = f"{s[0]}PLACE{s[9]}[{body}]{s[8]}"
    else:
        body = ",".join(f"{s[i]}{r}{s[i + 1]}-{c}{s[i + 2]}" for i, (r, c) in enumerate(coords))
        text = f"{s[0]}PLACE{s[9]}({body}){s[8]}"
    assert Placement.parse(text) == move
    assert str(Placement.parse(text)) == str(move)
    assert list(move.cells) == sorted(cells)


def test_zobrist_distinguishes_side_and_opening() -> None:
    """The hash depends on the side to move and on the first-action phase, not just cells."""
    game = Tetress()
    empty = "/".join(["." * 11] * 11)
    keys = {game.state_from_string(f"{empty} {'rb'[p % 2]} {p}").zobrist for p in range(4)}
    assert len(keys) == 4  # plies 2 and 3 differ by side; 0 and 1 also by phase
    assert game.state_from_string(f"{empty} r 2").zobrist != game.new_state().zobrist


@st.composite
def arbitrary_positions(draw: st.DrawFn) -> str:
    """Any board without a full line (one cell of each full line is emptied), any ply."""
    density = draw(st.sampled_from([".", "..", "...r", "rb", "rbb", "rrb."]))
    cells = draw(st.lists(st.sampled_from(density + "rb."), min_size=121, max_size=121))
    grid = [cells[r * N : r * N + N] for r in range(N)]
    for r in range(N):
        if "." not in grid[r]:
            grid[r][draw(st.integers(0, N - 1))] = "."
    for c in range(N):
        if all(grid[r][c] != "." for r in range(N)):
            grid[draw(st.integers(0, N - 1))][c] = "."
    ply = draw(st.integers(0, 150))
    return f"{'/'.join(''.join(row) for row in grid)} {'rb'[ply % 2]} {ply}"


@settings(max_examples=60, deadline=None)
@given(text=arbitrary_positions())
def test_legal_view_agrees_with_naive_model_on_any_board(text: str) -> None:
    """On arbitrary boards (dense, sparse, lopsided, any ply) the legal set matches the model."""
    state = Tetress().state_from_string(text)
    assert state.to_string() == text
    expected = naive_legal(state)
    got = {frozenset(p.coords) for p in state.legal_moves}
    assert got == expected and len(state.legal_moves) == len(expected)
    outcome = state.outcome()
    if state.ply >= 150:
        assert outcome is not None and outcome.termination.value == "turn_limit"
    else:
        assert (outcome is None) == bool(expected)
