"""Zobrist keys: one random 64-bit key per (colour, cell), for the side to move and the opening."""

from __future__ import annotations

import random

from engine.tetress import tables
from engine.tetress.geometry import CELLS
from engine.tetress.shapes import PLACEMENT_MASKS

_rng = random.Random(0x7E75E55)

#: ``CELL_KEYS[seat][cell]``.
CELL_KEYS: tuple[tuple[int, ...], tuple[int, ...]] = (
    tuple(_rng.getrandbits(64) for _ in range(CELLS)),
    tuple(_rng.getrandbits(64) for _ in range(CELLS)),
)
#: XORed in when Blue is to move.
SIDE_KEY = _rng.getrandbits(64)
#: XORed in while the mover still has the first-action exemption (plies 0 and 1).
OPENING_KEY = _rng.getrandbits(64)


def cells_key(seat: int, mask: int) -> int:
    """The XOR of the keys of every cell of ``mask`` for ``seat``."""
    keys = CELL_KEYS[seat]
    key = 0
    while mask:
        low = mask & -mask
        key ^= keys[low.bit_length() - 1]
        mask ^= low
    return key


def position_key(red: int, blue: int, ply: int) -> int:
    """The hash of a position computed from scratch."""
    key = cells_key(0, red) ^ cells_key(1, blue)
    if ply & 1:
        key ^= SIDE_KEY
    if ply < 2:
        key ^= OPENING_KEY
    return key


#: ``PLACEMENT_KEYS[seat][pid]``: the XOR of the keys of the placement's four cells.
PLACEMENT_KEYS: tuple[tuple[int, ...], tuple[int, ...]] = tables.stored("PLACEMENT_KEYS") or (
    tuple(cells_key(0, m) for m in PLACEMENT_MASKS),
    tuple(cells_key(1, m) for m in PLACEMENT_MASKS),
)
