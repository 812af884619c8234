"""What one game's referee said to each seat and what each seat answered, with times.

The runner notes every message at its seat boundary (the bytes it hands a session, the
events a session's reader puts on the game's queue); a failure pack
(:mod:`referee.match.packs`) is cut from one seat's side of it. Only references are kept
while the game runs (the serialised bytes, the received protobuf): nothing is converted
until a pack is written, so a game that ends normally pays for a list append per message.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from client_sdk.proto import referee_pb2 as pb


@dataclass(frozen=True, slots=True)
class Sent:
    """A message the referee wrote to the seat (the exact bytes)."""

    at: float
    data: bytes


@dataclass(frozen=True, slots=True)
class Answered:
    """A move message the seat sent (its ply may be a stray one)."""

    at: float
    move: pb.Move


@dataclass(frozen=True, slots=True)
class Happened:
    """Anything else the referee heard about the seat (a drop, a crash, a malformed message)."""

    at: float
    kind: str
    detail: str


Entry = Sent | Answered | Happened


@dataclass
class Transcript:
    """Both seats' conversations with the referee, in order, stamped with ``time.monotonic``."""

    started: float = field(default_factory=time.monotonic)
    seats: tuple[list[Entry], list[Entry]] = field(default_factory=lambda: ([], []))

    def sent(self, seat: int, data: bytes | pb.RefereeMessage) -> bytes:
        """Note a message to ``seat``; returns its bytes (to be written as they are)."""
        if isinstance(data, pb.RefereeMessage):
            data = data.SerializeToString()
        self.seats[seat].append(Sent(time.monotonic(), data))
        return data

    def answered(self, seat: int, move: pb.Move, at: float) -> None:
        self.seats[seat].append(Answered(at, move))

    def happened(self, seat: int, kind: str, detail: str, at: float) -> None:
        self.seats[seat].append(Happened(at, kind, detail))
