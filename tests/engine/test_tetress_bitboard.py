"""The unrolled-torus bitboards: layout, and the fast generator against the reference one."""

from __future__ import annotations

import random

from engine.tetress import bitboard
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
