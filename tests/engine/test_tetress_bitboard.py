"""The unrolled-torus bitboards: layout, and the fast generator against the reference one."""

from __future__ import annotations

import random

from engine.tetress import bitboard
from engine.tetress.game import Tetress
from engine.tetress.geometry import CELLS, N


def test_replicate_puts_every_cell_at_each_copy() -> None:
    """Cell (r, c) appears at every (R, C) < 16 with R - 1 = r and C - 1 = c modulo 11."""
    for cell in range(CELLS):
        r, c = divmod(cell, N)
        expected = {
            R * 16 + C
            for R in range(16)
            for C in range(16)
            if r == (R - 1) % N and c == (C - 1) % N
        }
        mask = bitboard.replicate(1 << cell)
        assert {i for i in range(256) if mask >> i & 1} == expected
        assert bitboard.ANCHOR_CELL[bitboard.CELL_POS[cell]] == cell
    assert bitboard.ANCHORS.bit_count() == CELLS


def test_fast_generator_equals_reference_generator() -> None:
    """legal_masks (shared runs) equals legal_masks_generic on random boards, both phases."""
    rng = random.Random(11)
    for i in range(3000):
        density = 1 + i % 4
        occupied = rng.getrandbits(CELLS)
        for _ in range(density - 1):
            occupied &= rng.getrandbits(CELLS)
        own = occupied & rng.getrandbits(CELLS)
        own_r = bitboard.replicate(own)
        occ_r = bitboard.replicate(occupied)
        for first in (False, True):
            fast = bitboard.legal_masks(own_r, occ_r, first)
            assert fast == bitboard.legal_masks_generic(own_r, occ_r, first), (i, first)


def test_has_legal_equals_any_legal_mask() -> None:
    """has_legal (early exit) answers any(legal_masks_generic) on sparse and crowded boards,
    both phases, including boards where no shape fits or none touches own tokens."""
    rng = random.Random(12)
    seen = set()
    for i in range(3000):
        occupied = rng.getrandbits(CELLS)
        for _ in range(i % 4):  # sparser ...
            occupied &= rng.getrandbits(CELLS)
        for _ in range(i % 3):  # ... or more crowded
            occupied |= rng.getrandbits(CELLS)
        own = occupied & rng.getrandbits(CELLS) & (rng.getrandbits(CELLS) if i % 5 else 0)
        own_r = bitboard.replicate(own)
        occ_r = bitboard.replicate(occupied)
        for first in (False, True):
            expected = any(bitboard.legal_masks_generic(own_r, occ_r, first))
            assert bitboard.has_legal(own_r, occ_r, first) == expected, (i, first)
            seen.add((first, expected))
    assert seen == {(False, False), (False, True), (True, False), (True, True)}


def test_is_over_without_cached_masks_agrees_with_outcome() -> None:
    """A fresh position's is_over (the early-exit check the referee asks every move) agrees
    with outcome, through random games to their ends."""
    game = Tetress()
    rng = random.Random(13)
    ends = 0
    for _ in range(40):
        state = game.new_state()
        while True:
            fresh = game.state_from_string(state.to_string())
            over = fresh.is_over()
            assert over == (state.outcome() is not None), state.to_string()
            if over:
                ends += 1
                break
            state.apply(rng.choice(list(state.legal_moves)))
    assert ends == 40


def test_precomputed_tables_equal_their_definitions() -> None:
    """Every table built at import (placements, lines, Zobrist keys) equals its plain
    definition: the one-cell-at-a-time builds are only faster, not different."""
    from engine.tetress import zobrist
    from engine.tetress.geometry import COL_MASKS, ROW_MASKS
    from engine.tetress.shapes import PLACEMENT_LINES, PLACEMENT_MASKS

    for pid, mask in enumerate(PLACEMENT_MASKS):
        assert bitboard.PLACEMENT_REPL[pid] == bitboard.replicate(mask)
        lines = [m for m in ROW_MASKS if m & mask] + [m for m in COL_MASKS if m & mask]
        assert PLACEMENT_LINES[pid] == tuple(lines)
        assert bitboard.PLACEMENT_LINES_REPL[pid] == tuple(bitboard.replicate(m) for m in lines)
        for seat in (0, 1):
            key = 0
            for cell in range(CELLS):
                if mask >> cell & 1:
                    key ^= zobrist.CELL_KEYS[seat][cell]
            assert zobrist.PLACEMENT_KEYS[seat][pid] == key
    for row in range(1 << N):
        spread = sum(1 << C for C in range(16) if row >> ((C - 1) % N) & 1)
        assert bitboard.replicate(row) >> 16 & 0xFFFF == spread  # layout row 1 is row 0
