"""A course-style bot that reports every call the platform makes, one line each on stdout
(which the platform must route to stderr):

    CALL init <color> args=<n positional> kw=<sorted keyword names> time=<time_remaining>
    CALL action <color> turn=<board turn colour> time=... space=<limit>/<remaining>
    CALL update <me> <mover> <action text> same=<True if it is the object this bot returned>
"""

from __future__ import annotations

import random
import sys
from typing import Any

from referee.game import Board, PlaceAction, PlayerColor

from .moves import legal_actions

CALLS: list[tuple[str, ...]] = []


def _say(*words: object) -> None:
    CALLS.append(tuple(str(w) for w in words))
    print("CALL", *words)


class Agent:
    def __init__(self, *args: Any, **referee: Any) -> None:
        self._color = referee.pop("color")
        self._board = Board()
        self._rng = random.Random(3)
        self._returned: list[PlaceAction] = []
        _say(
            "init",
            self._color,
            f"args={len(args)}",
            f"kw={','.join(sorted(referee))}",
            f"time={referee.get('time_remaining')}",
        )

    def action(self, **referee: Any) -> PlaceAction:
        _say(
            "action",
            self._color,
            f"turn={self._board.turn_color}",
            f"time={referee['time_remaining']}",
            f"space={referee['space_limit']}/{referee['space_remaining']}",
        )
        action = self._choose()
        self._returned.append(action)
        return action

    def _choose(self) -> PlaceAction:
        actions = legal_actions(self._board, self._color)
        action = self._rng.choice(actions)
        # Hand the cells over in a scrambled order: the opponent must see this exact order.
        cells = sorted(action.coords, reverse=True)
        return PlaceAction(*cells)

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        same = any(action is mine for mine in self._returned)
        _say(
            "update",
            self._color,
            color,
            str(action),
            f"same={same}",
            f"time={referee['time_remaining']}",
        )
        self._board.apply_action(action)


class NoneBot(Agent):
    """Returns None instead of an action on its second turn."""

    def action(self, **referee: Any) -> Any:
        super().action(**referee)
        return None if len(self._returned) >= 2 else self._returned[-1]


class StdinBot(Agent):
    """Tries to read stdin on its first turn (it must get end-of-file, not hang)."""

    def action(self, **referee: Any) -> Any:
        data = sys.stdin.read()
        print(f"CALL stdin {data!r}")
        return super().action(**referee)
