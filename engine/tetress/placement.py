"""The PLACE action as a value: a set of four cells, with its text form."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Final

from engine.errors import NotationError
from engine.tetress.geometry import CELLS, N, cell_name

_HEAD = re.compile(r"\s*PLACE\s*([\(\[])(.*)([\)\]])\s*", re.IGNORECASE | re.DOTALL)
# One cell, either ``r-c`` (our form) or ``(r, c)`` (the rules text's form).
_CELL = re.compile(r"\s*(?:([0-9]+)\s*-\s*([0-9]+)|\(\s*([0-9]+)\s*,\s*([0-9]+)\s*\))\s*")
_CLOSING: Final = {"(": ")", "[": "]"}


class Placement:
    """A PLACE action: four distinct cells. Immutable and hashable; equal when the cell sets are.

    A placement need not be a tetromino: that is a rule (``not_tetromino``), checked by the
    state, not a matter of syntax.
    """

    __slots__ = ("_cells", "_mask", "_text")

    _mask: int
    _cells: tuple[int, int, int, int]
    _text: str | None

    def __init__(self, mask: int) -> None:
        """Build from a 121-bit cell mask with exactly four bits set (see :meth:`from_cells`)."""
        if mask < 0 or mask >> CELLS or mask.bit_count() != 4:
            raise ValueError(f"a placement needs exactly 4 cells of 0..120, got mask {mask:#x}")
        cells = []
        rest = mask
        while rest:
            low = rest & -rest
            cells.append(low.bit_length() - 1)
            rest ^= low
        object.__setattr__(self, "_mask", mask)
        object.__setattr__(self, "_cells", tuple(cells))
        object.__setattr__(self, "_text", None)

    @classmethod
    def known_all(
        cls,
        masks: Sequence[int],
        cells: Sequence[tuple[int, int, int, int]],
        texts: Sequence[str],
    ) -> tuple[Placement, ...]:
        """Placements from the stored tables (:mod:`.tables`): each ``cells`` and ``text`` are
        its ``mask``'s, as :meth:`__init__` and :meth:`__str__` would find them, unchecked.
        Built a field at a time over all of them (every bot builds the 2299 when it starts)."""
        if not len(masks) == len(cells) == len(texts):
            raise ValueError("the stored tables disagree on the number of placements")
        placements = [object.__new__(cls) for _ in masks]
        for field, values in (("_mask", masks), ("_cells", cells), ("_text", texts)):
            deque(map(_SLOTS[field].__set__, placements, values), maxlen=0)
        return tuple(placements)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Placement is immutable")

    @classmethod
    def from_cells(cls, cells: Iterable[int | tuple[int, int]]) -> Placement:
        """A placement from four cells, each a cell index or an ``(r, c)`` pair.

        Raises :class:`~engine.errors.NotationError` for a wrong count, a cell off the board
        or a repeated cell.
        """
        items = list(cells)
        mask = 0
        for item in items:
            if isinstance(item, int):
                index = item
                if not 0 <= index < CELLS:
                    raise NotationError(repr(items), f"cell index {index} is outside 0..120")
            else:
                r, c = item
                if not (0 <= r < N and 0 <= c < N):
                    raise NotationError(repr(items), f"cell ({r}, {c}) is outside 0..10")
                index = r * N + c
            bit = 1 << index
            if mask & bit:
                raise NotationError(repr(items), f"cell {cell_name(index)} is repeated")
            mask |= bit
        if len(items) != 4:
            raise NotationError(repr(items), f"a placement has 4 cells, got {len(items)}")
        return cls(mask)

    @classmethod
    def parse(cls, text: str) -> Placement:
        """Parse ``PLACE(r-c, r-c, r-c, r-c)`` (cells in any order, any spacing).

        Also accepts the rules text's ``PLACE[(6,3), (7,2), (7,3), (7,4)]``. Raises
        :class:`~engine.errors.NotationError` when the text is not a placement.
        """
        cached = _PARSED.get(text)
        if cached is not None and cls is Placement:
            return cached
        head = _HEAD.fullmatch(text)
        if head is None:
            raise NotationError(text, "expected PLACE(r-c, r-c, r-c, r-c)")
        if _CLOSING[head.group(1)] != head.group(3):
            raise NotationError(text, "mismatched brackets", head.start(3))
        body = head.group(2)
        offset = head.start(2)
        parts = body.split(",") if "(" not in body else _split_pairs(text, body, offset)
        cells: list[tuple[int, int]] = []
        position = offset
        for part in parts:
            match = _CELL.fullmatch(part)
            if match is None:
                raise NotationError(text, f"bad cell {part.strip()!r}", position)
            groups = match.groups()
            r_text, c_text = (groups[0], groups[1]) if groups[0] is not None else groups[2:]
            assert r_text is not None and c_text is not None
            r, c = int(r_text), int(c_text)
            if not (0 <= r < N and 0 <= c < N):
                raise NotationError(text, f"cell {r}-{c} is outside 0..10", position)
            cells.append((r, c))
            position += len(part) + 1
        if len(cells) != 4:
            raise NotationError(text, f"a placement has 4 cells, got {len(cells)}")
        if len(set(cells)) != 4:
            raise NotationError(text, "a cell is repeated")
        placement = cls.from_cells(cells)
        if len(_PARSED) < _PARSED_MAX:
            _PARSED[text] = placement
        return placement

    @property
    def mask(self) -> int:
        """The cells as a bitmask over the 121 cells (bit ``r * 11 + c``)."""
        return self._mask

    @property
    def cells(self) -> tuple[int, int, int, int]:
        """The four cell indices, ascending."""
        return self._cells

    @property
    def coords(self) -> tuple[tuple[int, int], ...]:
        """The four cells as ``(r, c)``, ascending."""
        return tuple(divmod(i, N) for i in self._cells)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placement) and other._mask == self._mask

    def __hash__(self) -> int:
        return hash(self._mask)

    def __lt__(self, other: Placement) -> bool:
        return self._cells < other._cells

    def __str__(self) -> str:
        # Cached: the referee prints every accepted move (records, the next request).
        text = self._text
        if text is None:
            text = "PLACE(" + ", ".join(cell_name(i) for i in self._cells) + ")"
            object.__setattr__(self, "_text", text)
        return text

    def __repr__(self) -> str:
        return f"Placement.parse({str(self)!r})"

    def __reduce__(self) -> tuple[type[Placement], tuple[int]]:
        return (Placement, (self._mask,))


#: The slots of :class:`Placement`, set directly by :meth:`Placement.known_all`.
_SLOTS = {name: Placement.__dict__[name] for name in Placement.__slots__}


def _split_pairs(text: str, body: str, offset: int) -> list[str]:
    """Split ``(r,c), (r,c)`` on the commas between the pairs only."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(body):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise NotationError(text, "unbalanced parentheses", offset + i)
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    if depth != 0:
        raise NotationError(text, "unbalanced parentheses")
    parts.append(body[start:])
    return parts


# Successful parses, by text. The referee parses every move a bot sends, and bots send the
# same few thousand strings over and over; a Placement is immutable, so sharing one is safe.
# Bounded so that a bot inventing new spellings cannot grow it without limit.
_PARSED: dict[str, Placement] = {}
_PARSED_MAX = 16384


def remember_canonical(placements: Iterable[Placement]) -> None:
    """Seed the parse cache with the canonical text of ``placements`` (the interned ones), so
    that a bot's first use of a move costs a lookup too."""
    for placement in placements:
        _PARSED.setdefault(str(placement), placement)
