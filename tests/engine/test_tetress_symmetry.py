"""Openings equal up to the board's symmetries (the torus's translations, the square's rotations
and reflections) have one representative, and those maps really keep the game the same."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tetress import Placement, Tetress, random_move
from engine.tetress.symmetry import TURNS, canonical_line, equivalent

N = 11


def line(*moves: str) -> list[Placement]:
    return [Placement.parse(m) for m in moves]


def mapped(moves: list[Placement], turn: int, dr: int, dc: int) -> list[Placement]:
    """``moves`` turned by ``TURNS[turn]`` then shifted by ``(dr, dc)`` on the torus."""
    out = []
    for move in moves:
        cells = []
        for r, c in move.coords:
            tr, tc = TURNS[turn](r, c)
            cells.append(((tr + dr) % N, (tc + dc) % N))
        out.append(Placement.from_cells(cells))
    return out


def test_a_first_move_and_its_shifts_across_the_edge_are_one_opening() -> None:
    """The rules' opening T (Figure 4) anywhere on the board, including wrapped across both
    edges, is one line; an O is another."""
    t = line("PLACE(6-3, 7-2, 7-3, 7-4)")
    assert equivalent(t, line("PLACE(0-1, 1-0, 1-1, 1-2)"))
    assert equivalent(t, line("PLACE(10-0, 0-10, 0-0, 0-1)"))  # wraps both ways
    assert not equivalent(t, line("PLACE(2-7, 2-8, 3-7, 3-8)"))
    assert canonical_line(t) == tuple(line("PLACE(0-0, 0-1, 0-2, 1-1)"))  # least cells first


def test_rotated_and_mirrored_openings_are_one_line_and_relative_placement_still_counts() -> None:
    """Figure 4's two opening moves, rotated a quarter turn or mirrored, are the same line;
    the same two pieces placed differently relative to each other are not."""
    opening = line("PLACE(6-3, 7-2, 7-3, 7-4)", "PLACE(2-7, 2-8, 3-7, 3-8)")
    for turn in range(8):
        assert equivalent(opening, mapped(opening, turn, 4, 9))
    moved = line("PLACE(6-3, 7-2, 7-3, 7-4)", "PLACE(2-6, 2-7, 3-6, 3-7)")
    assert not equivalent(opening, moved)


def test_every_first_move_folds_into_the_five_free_tetrominoes() -> None:
    """The 2,299 legal first moves (19 fixed tetrominoes at 121 places) are five openings:
    I, O, T, S/Z and L/J, the free tetrominoes."""
    firsts = list(Tetress().new_state().legal_moves)
    assert len(firsts) == 19 * 121
    assert len({canonical_line([m]) for m in firsts}) == 5


def _random_line(seed: int, plies: int) -> list[Placement]:
    rng = random.Random(seed)
    state = Tetress().new_state()
    for _ in range(plies):
        if state.is_over():
            break
        state.apply(random_move(state, rng))
    return list(state.history)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    turn=st.integers(0, 7),
    dr=st.integers(0, N - 1),
    dc=st.integers(0, N - 1),
)
def test_a_mapped_game_is_the_same_game_with_the_same_representative(
    seed: int, turn: int, dr: int, dc: int
) -> None:
    """Any map of the group sends a legal line to a legal line with the same token counts and
    mobility after every move (lines cleared alike), and to the same representative, which is
    itself a legal line whose prefixes are the prefixes' representatives."""
    moves = _random_line(seed, 24)
    image = mapped(moves, turn, dr, dc)
    a, b = Tetress().new_state(), Tetress().new_state()
    for m, n in zip(moves, image, strict=True):
        a.apply(m)
        b.apply(n)
        assert a.token_counts == b.token_counts
        assert (a.mobility(0), a.mobility(1)) == (b.mobility(0), b.mobility(1))
    first = moves[:4]
    canonical = canonical_line(first)
    assert canonical == canonical_line(mapped(first, turn, dr, dc))
    assert canonical_line(canonical) == canonical
    for k in range(len(first)):
        assert canonical[:k] == canonical_line(first[:k])
    replay = Tetress().new_state()
    for move in canonical:
        replay.apply(move)


def test_the_game_contract_folds_tetress_only() -> None:
    """``Game.canonical_line`` is the one place: Tetress folds, a game without symmetries (ATT)
    keeps its line."""
    from engine.registry import load_game

    t = line("PLACE(6-3, 7-2, 7-3, 7-4)")
    assert load_game("tetress").canonical_line(t) == canonical_line(t)
    att = load_game("att")
    state = att.new_state()
    moves = [next(iter(state.legal_moves))]
    assert att.canonical_line(moves) == tuple(moves) and att.symmetries == ""
