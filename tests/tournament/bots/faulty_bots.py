"""SDK bots that break the rules, for forfeit-policy tests.

``IllegalBot`` answers with text that is no move (an illegal-move forfeit on its first turn);
``CrashBot`` raises in its first turn (a runtime-error forfeit).
"""

from __future__ import annotations

from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State


class IllegalBot(Agent):
    name = "illegal"

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        return "not-a-move"


class CrashBot(Agent):
    name = "crash"

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        raise RuntimeError("this bot always crashes")
