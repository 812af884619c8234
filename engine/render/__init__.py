"""Pictures of positions for every registered game: text (plain or ANSI colour) and SVG.

Built on the generic :meth:`engine.game.State.grid`, with per-game labels and colours in
:mod:`engine.render.style`. Pure: they return strings.
"""

from engine.render.style import STYLES, BoardStyle, board_style, last_move_cells
from engine.render.svg import render_svg
from engine.render.text import render_text, status_line

__all__ = [
    "STYLES",
    "BoardStyle",
    "board_style",
    "last_move_cells",
    "render_svg",
    "render_text",
    "status_line",
]
