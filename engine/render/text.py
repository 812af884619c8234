"""Text pictures of a position, plain or with ANSI colours, for any registered game."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from engine.game import State
from engine.render.style import Cell, board_layout

_RESET = "\x1b[0m"
_DIM = "2"
_MARK = "7"  # reverse video for the last move's cells


def render_text(
    state: State[Any],
    *,
    color: bool = False,
    highlight: Collection[Cell] | None = None,
    highlight_last: bool = True,
    status: bool = True,
) -> str:
    """The board with the game's coordinate labels, then a status line.

    Each cell is three characters wide; cells of the last board move (or of ``highlight``) are
    shown as ``[x]`` in plain text and in reverse video with ``color``. The status line says
    whose turn it is or how the game ended, and the last move in the game's notation.
    """
    layout = board_layout(state, highlight, highlight_last)
    style, grid, marked = layout.style, layout.grid, layout.marked
    rows, cols = layout.rows, layout.cols
    pad = max((len(label) for label in rows), default=1)

    header = " " * (pad + 1) + "".join(f"{label:^3}" for label in cols)
    lines = [] if style.labels_below else [header.rstrip()]
    for r, row in enumerate(grid):
        cells = [
            _cell(char, (r, c) in marked, style.ansi.get(char), color) for c, char in enumerate(row)
        ]
        line = f"{rows[r]:>{pad}} " + "".join(cells)
        lines.append(line if color else line.rstrip())
    if style.labels_below:
        lines.append(header.rstrip())
    if status:
        lines.append(status_line(state))
    return "\n".join(lines)


def _cell(char: str, marked: bool, code: str | None, color: bool) -> str:
    if not color:
        return f"[{char}]" if marked else f" {char} "
    if char == ".":
        sgr = _DIM + (";" + _MARK if marked else "")
    else:
        sgr = (code or "1") + (";" + _MARK if marked else "")
    return f"\x1b[{sgr}m {char} {_RESET}"


def status_line(state: State[Any]) -> str:
    """``ply 12, BLUE to move; last move PLACE(...)`` or ``ply 40, game over: ...``."""
    game = state.game
    outcome = state.outcome()
    if outcome is None:
        text = f"ply {state.ply}, {game.seat_names[state.to_move]} to move"
    else:
        who = "draw" if outcome.winner is None else f"{game.seat_names[outcome.winner]} wins"
        text = f"ply {state.ply}, game over: {who} ({outcome.termination.value})"
    if state.history:
        before = state.copy()
        move = before.undo()
        text += f"; last move {before.san(move)}"
    return text
