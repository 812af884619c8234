"""SDK bots that fault on purpose after a few good moves, for the failure-pack tests.

Each class plays seeded random legal moves (Python's ``random``, which the SDK seeds from
``TETROMINO_SEED``) and commits its fault at its fourth move: run as ``faulty.py:Raise`` etc.
Every bot prints a line with its secret to stderr, so a test can look for it in packs.
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State

FAULT_AT = 4


class _Faulty(Agent):
    secret = "SECRET-OF-THE-FAULTY-BOT"

    def __init__(self) -> None:
        self.moves = 0
        self.first: Any = None

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        self.moves += 1
        print(f"{type(self).__name__} move {self.moves} {self.secret}", file=sys.stderr)
        if self.moves >= FAULT_AT:
            return self.fault(state)
        move = random.choice(sorted(state.legal_moves, key=str))
        self.first = self.first or move
        return move

    def fault(self, state: State[Any]) -> Any:
        raise NotImplementedError


class Fine(_Faulty):
    """Never faults; its secret is another one (a faulted opponent must never see it)."""

    secret = "PRIVATE-TO-THE-FINE-OPPONENT"

    def fault(self, state: State[Any]) -> Any:
        return random.choice(sorted(state.legal_moves, key=str))


class Raise(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        raise RuntimeError("the bot broke on purpose")


class Exit(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        sys.stderr.flush()
        os._exit(3)


class Hang(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        time.sleep(3600)


class Hog(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        hoard = []
        while True:
            hoard.append(bytearray(8 * 1024 * 1024))


class Illegal(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        return self.first  # played already: its cells are taken


class Long(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        return "PLACE(" + "0-0, " * 100 + ")"  # over the referee's limit on a move's text


class NoMove(_Faulty):
    def fault(self, state: State[Any]) -> Any:
        return None
