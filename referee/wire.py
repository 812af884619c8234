"""Hand-assembled protobuf encoding for the per-move messages, from cached parts.

A move request repeats everything needed to resynchronise from nothing (the game's fixed
facts and every move so far), which the protobuf library would copy and re-encode on every
ply. The wire format lets a message be the concatenation of its encoded fields, so the fixed
parts are encoded once per game (and the move list grows by one encoded entry per ply) and
each request is a few small fields plus those cached bytes. The result parses as an ordinary
``RefereeMessage``; ``tests/referee/test_referee_wire.py`` checks it against the library.
"""

from __future__ import annotations

import struct

from client_sdk.proto import referee_pb2 as pb

# Field numbers, from protos/tetromino/referee/v1/referee.proto.
_REFEREE_MOVE_REQUEST = 3
_REFEREE_MOVE_PLAYED = 4
_REQ_GAME_ID = 1
_REQ_PLY = 2
_REQ_POSITION = 3
_REQ_MOVES = 4
_REQ_CLOCKS = 5
_REQ_LIMIT = 6
_REQ_INFO = 7
_REQ_LAST_MOVE = 8

_LEN = 2
_I64 = 1
_VARINT = 0


_SMALL = [bytes((i,)) for i in range(128)]


def varint(value: int) -> bytes:
    if 0 <= value < 128:
        return _SMALL[value]
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint((number << 3) | wire_type)


def length_delimited(number: int, data: bytes) -> bytes:
    """One length-delimited field (string, bytes or embedded message)."""
    return tag(number, _LEN) + varint(len(data)) + data


def text_field(number: int, text: str) -> bytes:
    return length_delimited(number, text.encode("utf-8"))


_DOUBLE = struct.Struct("<d")
_TAG_REQ_PLY = tag(_REQ_PLY, _VARINT)
_TAG_REQ_POSITION = tag(_REQ_POSITION, _LEN)
_TAG_REQ_LIMIT = tag(_REQ_LIMIT, _I64)


class RequestEncoder:
    """Encodes one game's move requests for one seat from cached parts."""

    __slots__ = ("_game_id", "_info", "_moves")

    def __init__(self, game_id: str, info: pb.GameInfo) -> None:
        self._game_id = text_field(_REQ_GAME_ID, game_id)
        self._info = length_delimited(_REQ_INFO, info.SerializeToString())
        self._moves = bytearray()

    def add_move(self, action: str) -> None:
        """Append one accepted move to the cached move list."""
        self._moves += text_field(_REQ_MOVES, action)

    def encode(
        self,
        ply: int,
        position: str,
        clocks: bytes,
        limit: float | None,
        last_move: bytes | None,
    ) -> bytes:
        """A whole ``RefereeMessage(move_request=...)``.

        ``clocks`` is :func:`encode_clocks`' output; ``last_move`` an encoded ``MovePlayed``.
        """
        parts = [self._game_id]
        if ply:
            parts.append(_TAG_REQ_PLY + varint(ply))
        data = position.encode()
        parts.append(_TAG_REQ_POSITION + varint(len(data)) + data)
        parts.append(bytes(self._moves))
        parts.append(clocks)
        if limit is not None:
            parts.append(_TAG_REQ_LIMIT + _DOUBLE.pack(limit))
        parts.append(self._info)
        if last_move is not None:
            parts.append(length_delimited(_REQ_LAST_MOVE, last_move))
        return length_delimited(_REFEREE_MOVE_REQUEST, b"".join(parts))


def encode_clocks(clocks: list[pb.Clock]) -> bytes:
    """The ``clocks`` field of a move request."""
    return b"".join(length_delimited(_REQ_CLOCKS, c.SerializeToString()) for c in clocks)


_CLOCK_NAME = 1
_CLOCK_REMAINING = 2
_CLOCK_USED = 3
_MP_GAME_ID = 1
_MP_PLY = 2
_MP_SEAT = 3
_MP_ACTION = 4
_MP_TIME = 5
_MP_POSITION = 6
_MP_CLOCKS = 7
# Tags are constants: computed once, not per move.
_TAG_REMAINING = tag(_CLOCK_REMAINING, _I64)
_TAG_USED = tag(_CLOCK_USED, _I64)
_TAG_MP_PLY = tag(_MP_PLY, _VARINT)
_TAG_MP_SEAT = tag(_MP_SEAT, _VARINT)
_TAG_MP_ACTION = tag(_MP_ACTION, _LEN)
_TAG_MP_TIME = tag(_MP_TIME, _I64)
_TAG_MP_POSITION = tag(_MP_POSITION, _LEN)
_TAG_MP_CLOCKS = tag(_MP_CLOCKS, _LEN)
_TAG_REQ_CLOCKS = tag(_REQ_CLOCKS, _LEN)


def encode_clock(name_field: bytes, remaining: float | None, used: float) -> bytes:
    """One encoded ``Clock`` (``name_field``: ``text_field(1, seat_name)``, cached)."""
    out = name_field
    if remaining is not None:
        out += _TAG_REMAINING + _DOUBLE.pack(remaining)
    if used:
        out += _TAG_USED + _DOUBLE.pack(used)
    return out


def clocks_field(clocks: list[bytes]) -> bytes:
    """The ``clocks`` field of a move request from encoded ``Clock`` messages."""
    return b"".join([_TAG_REQ_CLOCKS + varint(len(c)) + c for c in clocks])


def encode_move_played(
    game_id_field: bytes,
    ply: int,
    seat: int,
    action: str,
    time_s: float,
    position: str,
    clocks: list[bytes],
) -> bytes:
    """An encoded ``MovePlayed`` (``game_id_field``: ``text_field(1, game_id)``, cached)."""
    parts = [game_id_field]
    if ply:
        parts.append(_TAG_MP_PLY + varint(ply))
    if seat:
        parts.append(_TAG_MP_SEAT + varint(seat))
    data = action.encode()
    parts.append(_TAG_MP_ACTION + varint(len(data)) + data)
    if time_s:
        parts.append(_TAG_MP_TIME + _DOUBLE.pack(time_s))
    data = position.encode()
    parts.append(_TAG_MP_POSITION + varint(len(data)) + data)
    for clock in clocks:
        parts.append(_TAG_MP_CLOCKS + varint(len(clock)) + clock)
    return b"".join(parts)


def wrap_move_played(encoded: bytes) -> bytes:
    """A ``RefereeMessage(move_played=...)`` from an encoded ``MovePlayed``."""
    return length_delimited(_REFEREE_MOVE_PLAYED, encoded)
