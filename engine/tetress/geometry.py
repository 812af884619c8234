"""The 11x11 torus: cell indices, coordinates and 121-bit cell masks (bit ``r * 11 + c``)."""

from __future__ import annotations

N = 11
CELLS = N * N
FULL = (1 << CELLS) - 1


def cell_index(r: int, c: int) -> int:
    """The index of cell ``(r, c)``; both must be in ``0..10``."""
    return r * N + c


def cell_coord(index: int) -> tuple[int, int]:
    """The ``(r, c)`` of a cell index."""
    return divmod(index, N)


def cell_name(index: int) -> str:
    """A cell as ``r-c``, the notation's form."""
    r, c = divmod(index, N)
    return f"{r}-{c}"


ROW_MASKS: tuple[int, ...] = tuple(((1 << N) - 1) << (r * N) for r in range(N))
COL_MASKS: tuple[int, ...] = tuple(sum(1 << (r * N + c) for r in range(N)) for c in range(N))
_COL0 = COL_MASKS[0]
_COL10 = COL_MASKS[N - 1]
_ROW0 = ROW_MASKS[0]


def neighbours(index: int) -> tuple[int, int, int, int]:
    """The four cells next to ``index`` on the torus: up, down, left, right."""
    r, c = divmod(index, N)
    return (
        ((r - 1) % N) * N + c,
        ((r + 1) % N) * N + c,
        r * N + (c - 1) % N,
        r * N + (c + 1) % N,
    )


def dilate(mask: int) -> int:
    """``mask`` plus every cell next to one of its cells, with wrap-around."""
    right = ((mask & ~_COL10) << 1) | ((mask & _COL10) >> (N - 1))
    left = ((mask & ~_COL0) >> 1) | ((mask & _COL0) << (N - 1))
    down = ((mask << N) & FULL) | (mask >> (CELLS - N))
    up = (mask >> N) | ((mask & _ROW0) << (CELLS - N))
    return mask | right | left | down | up


def iter_bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
