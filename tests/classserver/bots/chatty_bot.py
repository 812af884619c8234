"""A bot that prints a line before every move (``referee match -v`` shows bot output)."""

from __future__ import annotations

from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class ChattyBot(Agent):
    name = "chatty"

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        moves = list(state.legal_moves)
        print(f"thinking about {len(moves)} moves at ply {state.ply}", flush=True)
        return moves[0]
