"""Cheap helpers for bots and benchmarks: uniform random moves and random games."""

from __future__ import annotations

import random

from engine.tetress.bitboard import ANCHOR_CELL
from engine.tetress.geometry import CELLS
from engine.tetress.placement import Placement
from engine.tetress.shapes import PLACEMENTS
from engine.tetress.state import TetressState

_HALVES = tuple((w, (1 << w) - 1) for w in (128, 64, 32, 16, 8))


def nth_bit(mask: int, n: int) -> int:
    """The position of the ``n``-th (0-based) set bit of a non-negative ``mask`` < 2**256."""
    pos = 0
    for width, low_mask in _HALVES:
        low = mask & low_mask
        count = low.bit_count()
        if n >= count:
            n -= count
            mask >>= width
            pos += width
        else:
            mask = low
    while True:
        low = mask & -mask
        if n == 0:
            return pos + low.bit_length() - 1
        mask ^= low
        n -= 1


def random_move_id(state: TetressState, rng: random.Random) -> int:
    """The id of a legal placement chosen uniformly; ``-1`` when there is none."""
    masks = state.legal_masks()
    counts = list(map(int.bit_count, masks))
    total = sum(counts)
    if total == 0:
        return -1
    n = rng.randrange(total)
    for shape, count in enumerate(counts):
        if n < count:
            return shape * CELLS + ANCHOR_CELL[nth_bit(masks[shape], n)]
        n -= count
    raise AssertionError("unreachable")


def random_move(state: TetressState, rng: random.Random) -> Placement:
    """A legal placement chosen uniformly at random; ``ValueError`` when there is none."""
    pid = random_move_id(state, rng)
    if pid < 0:
        raise ValueError("no legal placement in this position")
    return PLACEMENTS[pid]


def play_random_game(state: TetressState, rng: random.Random) -> TetressState:
    """Play uniformly random moves from ``state`` (in place) until the game ends; return it."""
    while True:
        pid = random_move_id(state, rng)
        if pid < 0:
            return state
        state.apply_id(pid)
