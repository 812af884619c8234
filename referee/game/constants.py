"""Board size and turn limit of Tetress, under the names course bots import."""

from __future__ import annotations

BOARD_N = 11
MAX_TURNS = 150
