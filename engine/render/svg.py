"""A position as a standalone SVG picture, for any registered game.

The picture is self-contained (no scripts, no external styles) so it can be inlined in HTML or
saved as a ``.svg`` file. Every board cell is one ``<rect>`` with ``class="cell"``; each filled
cell adds one element with ``class="piece <name>"`` (a circle token for Tetress, a square block
for ATT) and ``data-cell="row,col"``; cells of the last move get a ``class="last"`` outline.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from engine.game import State
from engine.render.style import Cell, board_layout, fill_for
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
    style, grid, marked = layout.style, layout.grid, layout.marked
    height, width, rows, cols = layout.height, layout.width, layout.rows, layout.cols

    font = max(8, cell // 2)
    margin = cell
    board_x = margin
    board_y = cell if not style.labels_below else cell // 2
    board_w = width * cell
    board_h = height * cell
    total_w = board_x + board_w + cell // 2
    total_h = board_y + board_h + (cell if style.labels_below else cell // 2)
    status = status_line(state) if caption else ""
    if caption:
        total_h += cell
        # Sans-serif glyphs average about 0.55 em: widen the picture so the caption fits.
        total_w = max(total_w, board_x + int(len(status) * font * 0.55) + cell // 2)

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
        f'viewBox="0 0 {total_w} {total_h}" font-family="sans-serif" font-size="{font}">',
        f"<title>{escape(title or _default_title(state))}</title>",
        f'<rect class="background" x="0" y="0" width="{total_w}" height="{total_h}" fill="white"/>',
        f'<rect class="board" x="{board_x}" y="{board_y}" width="{board_w}" height="{board_h}" '
        f'fill="{_BOARD}" stroke="{_INK}"/>',
    ]
    for r in range(height):
        for c in range(width):
            x, y = board_x + c * cell, board_y + r * cell
            out.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="none" stroke="{_GRID}" stroke-width="0.5"/>'
            )
    for r, row in enumerate(grid):
        for c, char in enumerate(row):
            if char == ".":
                continue
            x, y = board_x + c * cell, board_y + r * cell
            name = style.names.get(char, f"c{ord(char)}")
            attrs = f'class="piece {name}" data-cell="{r},{c}" fill="{fill_for(style, char)}"'
            if style.tokens:
                radius = cell * 0.4
                out.append(
                    f'<circle {attrs} cx="{x + cell / 2:g}" cy="{y + cell / 2:g}" '
                    f'r="{radius:g}" stroke="{_INK}" stroke-width="0.75"/>'
                )
            else:
                inset = 1
                out.append(
                    f'<rect {attrs} x="{x + inset}" y="{y + inset}" width="{cell - 2 * inset}" '
                    f'height="{cell - 2 * inset}" rx="2" stroke="{_INK}" stroke-width="0.75"/>'
                )
    for r, c in sorted(marked):
        if 0 <= r < height and 0 <= c < width:
            x, y = board_x + c * cell, board_y + r * cell
            out.append(
                f'<rect class="last" data-cell="{r},{c}" x="{x + 1.5:g}" y="{y + 1.5:g}" '
                f'width="{cell - 3}" height="{cell - 3}" fill="none" stroke="{_LAST}" '
                f'stroke-width="3"/>'
            )
    for (r, c), (char, number) in sorted((ghosts or {}).items()):
        x, y = board_x + c * cell, board_y + r * cell
        name = style.names.get(char, f"c{ord(char)}")
        out.append(
            f'<g class="ghost {name}" data-cell="{r},{c}" data-pv="{number}">'
            f'<rect x="{x + 3}" y="{y + 3}" width="{cell - 6}" height="{cell - 6}" rx="2" '
            f'fill="{fill_for(style, char)}" fill-opacity="0.35" stroke="{_INK}" '
            f'stroke-dasharray="2 2"/><text x="{x + cell / 2:g}" y="{y + cell * 0.68:g}" '
            f'text-anchor="middle" font-size="{max(7, cell // 3)}" fill="{_INK}">'
            f"{number}</text></g>"
        )
    label_y = board_y + board_h + cell * 0.7 if style.labels_below else board_y - cell * 0.3
    for c, label in enumerate(cols):
        out.append(
            f'<text class="col-label" x="{board_x + c * cell + cell / 2:g}" y="{label_y:g}" '
            f'text-anchor="middle" fill="{_INK}">{escape(label)}</text>'
        )
    for r, label in enumerate(rows):
        out.append(
            f'<text class="row-label" x="{board_x - cell * 0.2:g}" '
            f'y="{board_y + r * cell + cell * 0.65:g}" text-anchor="end" fill="{_INK}">'
            f"{escape(label)}</text>"
        )
    if caption:
        out.append(
            f'<text class="status" x="{board_x}" y="{total_h - cell * 0.35:g}" fill="{_INK}" '
            f"data-to-move={quoteattr(state.game.seat_names[state.to_move])}>"
            f"{escape(status)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _default_title(state: State[Any]) -> str:
    return f"{state.game.title}, ply {state.ply}"
