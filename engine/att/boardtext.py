"""The well of an ATT position as text: rows top first, separated by ``/``, each a run of
``#`` (filled) and counts of empty cells, as in ``4#5/10``."""

from __future__ import annotations

from engine.att.search import Rows
from engine.errors import PositionError


def board_to_string(rows: Rows, width: int) -> str:
    out = []
    for row in rows:
        text = ""
        empty = 0
        for c in range(width):
            if (row >> c) & 1:
                if empty:
                    text += str(empty)
                    empty = 0
                text += "#"
            else:
                empty += 1
        if empty:
            text += str(empty)
        out.append(text)
    return "/".join(out)


def board_from_string(text: str, width: int, height: int) -> Rows:
    parts = text.split("/")
    if len(parts) != height:
        raise PositionError(f"the board has {len(parts)} rows, not {height}")
    rows = []
    for number, part in enumerate(parts):
        row = 0
        c = 0
        digits = ""
        for ch in part + "\0":
            if ch.isdigit():
                digits += ch
                continue
            if digits:
                if digits.startswith("0"):
                    raise PositionError(f"row {number + 1}: bad run {digits!r}")
                c += int(digits)
                digits = ""
            if ch == "#":
                if c < width:
                    row |= 1 << c
                c += 1
            elif ch != "\0":
                raise PositionError(f"row {number + 1}: unexpected {ch!r} in {part!r}")
        if c != width:
            raise PositionError(f"row {number + 1} ({part!r}) is {c} cells wide, not {width}")
        rows.append(row)
    return tuple(rows)
