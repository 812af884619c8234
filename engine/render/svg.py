"""A position as a standalone SVG picture, for any registered game.

The picture is self-contained (no scripts, no external styles) so it can be inlined in HTML or
saved as a ``.svg`` file. Every board cell is one ``<rect>`` with ``class="cell"``; each filled
cell adds one element with ``class="piece <name>"`` (a circle token for Tetress, a square block
for ATT) and ``data-cell="row,col"``; cells of the last move get a ``class="last"`` outline.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from engine.game import State
from engine.render.style import BoardLayout, BoardStyle, Cell, board_layout, fill_for
from engine.render.text import status_line

_BOARD = "#f4f1ea"
_GRID = "#c9c2b3"
_INK = "#333333"
_LAST = "#f2b705"


def render_svg(
    state: State[Any],
    *,
    cell: int = 28,
    highlight: Collection[Cell] | None = None,
    highlight_last: bool = True,
    caption: bool = True,
    title: str | None = None,
    ghosts: Mapping[Cell, tuple[str, int]] | None = None,
) -> str:
    """The position as an ``<svg>`` document string.

    ``cell`` is the side of one cell in pixels. Coordinate labels follow the game's notation
    (Tetress: rows and columns 0-10; ATT: columns a..m under the well, rows numbered from the
    bottom). The last board move's cells are outlined unless ``highlight_last`` is false, or
    ``highlight`` names other cells. ``caption`` adds the status line under the board.
    ``ghosts`` draws pieces that are not on the board, faint and numbered (a bot's expected
    line): each cell maps to its grid character and the line's move number.
    """
    layout = board_layout(state, highlight, highlight_last)
    status = status_line(state) if caption else ""
    frame = _Frame.around(layout, cell, status if caption else None)
    w, h = frame.total_w, frame.total_h
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{frame.font}">',
        f"<title>{escape(title or _default_title(state))}</title>",
        f'<rect class="background" x="0" y="0" width="{w}" height="{h}" fill="white"/>',
        f'<rect class="board" x="{frame.board_x}" y="{frame.board_y}" width="{frame.board_w}" '
        f'height="{frame.board_h}" fill="{_BOARD}" stroke="{_INK}"/>',
    ]
    out += _cells(frame, layout)
    out += _pieces(frame, layout)
    out += _last_move(frame, layout)
    out += _ghosts(frame, layout.style, ghosts or {})
    out += _labels(frame, layout)
    if caption:
        out.append(
            f'<text class="status" x="{frame.board_x}" y="{h - cell * 0.35:g}" fill="{_INK}" '
            f"data-to-move={quoteattr(state.game.seat_names[state.to_move])}>"
            f"{escape(status)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


@dataclass(frozen=True, slots=True)
class _Frame:
    """Where the board sits in the picture, in pixels, and the picture's size."""

    cell: int
    font: int
    board_x: int
    board_y: int
    board_w: int
    board_h: int
    total_w: int
    total_h: int

    @classmethod
    def around(cls, layout: BoardLayout, cell: int, status: str | None) -> _Frame:
        """The frame of ``layout`` with labels, and room for the ``status`` caption if any."""
        font = max(8, cell // 2)
        below = layout.style.labels_below
        board_x = cell
        board_y = cell if not below else cell // 2
        board_w = layout.width * cell
        board_h = layout.height * cell
        total_w = board_x + board_w + cell // 2
        total_h = board_y + board_h + (cell if below else cell // 2)
        if status is not None:
            total_h += cell
            # Sans-serif glyphs average about 0.55 em: widen the picture so the caption fits.
            total_w = max(total_w, board_x + int(len(status) * font * 0.55) + cell // 2)
        return cls(cell, font, board_x, board_y, board_w, board_h, total_w, total_h)

    def corner(self, r: int, c: int) -> tuple[int, int]:
        """The top-left pixel of board cell ``(r, c)``."""
        return self.board_x + c * self.cell, self.board_y + r * self.cell


def _cells(frame: _Frame, layout: BoardLayout) -> Iterator[str]:
    """The empty grid: one outlined square per board cell."""
    cell = frame.cell
    for r in range(layout.height):
        for c in range(layout.width):
            x, y = frame.corner(r, c)
            yield (
                f'<rect class="cell" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="none" stroke="{_GRID}" stroke-width="0.5"/>'
            )


def _pieces(frame: _Frame, layout: BoardLayout) -> Iterator[str]:
    """One token (games with tokens) or block per filled cell."""
    style, cell = layout.style, frame.cell
    for r, row in enumerate(layout.grid):
        for c, char in enumerate(row):
            if char == ".":
                continue
            x, y = frame.corner(r, c)
            name = style.names.get(char, f"c{ord(char)}")
            attrs = f'class="piece {name}" data-cell="{r},{c}" fill="{fill_for(style, char)}"'
            if style.tokens:
                radius = cell * 0.4
                yield (
                    f'<circle {attrs} cx="{x + cell / 2:g}" cy="{y + cell / 2:g}" '
                    f'r="{radius:g}" stroke="{_INK}" stroke-width="0.75"/>'
                )
            else:
                inset = 1
                yield (
                    f'<rect {attrs} x="{x + inset}" y="{y + inset}" width="{cell - 2 * inset}" '
                    f'height="{cell - 2 * inset}" rx="2" stroke="{_INK}" stroke-width="0.75"/>'
                )


def _last_move(frame: _Frame, layout: BoardLayout) -> Iterator[str]:
    """An outline on each marked cell that lies on the board."""
    cell = frame.cell
    for r, c in sorted(layout.marked):
        if 0 <= r < layout.height and 0 <= c < layout.width:
            x, y = frame.corner(r, c)
            yield (
                f'<rect class="last" data-cell="{r},{c}" x="{x + 1.5:g}" y="{y + 1.5:g}" '
                f'width="{cell - 3}" height="{cell - 3}" fill="none" stroke="{_LAST}" '
                f'stroke-width="3"/>'
            )


def _ghosts(
    frame: _Frame, style: BoardStyle, ghosts: Mapping[Cell, tuple[str, int]]
) -> Iterator[str]:
    """The faint, numbered pieces of an expected line."""
    cell = frame.cell
    for (r, c), (char, number) in sorted(ghosts.items()):
        x, y = frame.corner(r, c)
        name = style.names.get(char, f"c{ord(char)}")
        yield (
            f'<g class="ghost {name}" data-cell="{r},{c}" data-pv="{number}">'
            f'<rect x="{x + 3}" y="{y + 3}" width="{cell - 6}" height="{cell - 6}" rx="2" '
            f'fill="{fill_for(style, char)}" fill-opacity="0.35" stroke="{_INK}" '
            f'stroke-dasharray="2 2"/><text x="{x + cell / 2:g}" y="{y + cell * 0.68:g}" '
            f'text-anchor="middle" font-size="{max(7, cell // 3)}" fill="{_INK}">'
            f"{number}</text></g>"
        )


def _labels(frame: _Frame, layout: BoardLayout) -> Iterator[str]:
    """The column labels (above the board, or below it) and the row labels on its left."""
    cell, board_x, board_y = frame.cell, frame.board_x, frame.board_y
    if layout.style.labels_below:
        label_y = board_y + frame.board_h + cell * 0.7
    else:
        label_y = board_y - cell * 0.3
    for c, label in enumerate(layout.cols):
        yield (
            f'<text class="col-label" x="{board_x + c * cell + cell / 2:g}" y="{label_y:g}" '
            f'text-anchor="middle" fill="{_INK}">{escape(label)}</text>'
        )
    for r, label in enumerate(layout.rows):
        yield (
            f'<text class="row-label" x="{board_x - cell * 0.2:g}" '
            f'y="{board_y + r * cell + cell * 0.65:g}" text-anchor="end" fill="{_INK}">'
            f"{escape(label)}</text>"
        )


def _default_title(state: State[Any]) -> str:
    return f"{state.game.title}, ply {state.ply}"
