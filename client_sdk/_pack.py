"""Failure packs: one faulted seat's side of a game, enough to replay it on a laptop.

A pack is one JSON object (``format`` ``tetromino-failure-pack``, ``version`` 2; the fields
are described in docs/records.md; its plies are numbered as everywhere people read them,
:func:`engine.adjudication.ply_number`). The referee writes it (:mod:`referee.match.packs`);
``python -m client_sdk reproduce`` reads it here. Reading is strict and says in one line what
is wrong with a pack that is not one, too big, or of another version.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from client_sdk._errors import SdkError
from client_sdk.proto import referee_pb2 as pb

FORMAT = "tetromino-failure-pack"
VERSION = 2
#: The versions read: version 1 numbered ``fault_ply`` and ``moves[].ply`` from 0.
READS = (1, 2)
#: A pack is refused above this size (a whole 300-ply game is far below it).
MAX_PACK_BYTES = 4 * 1024 * 1024
#: Characters of the bot's output kept in a pack (its last ones).
OUTPUT_TAIL_CHARS = 8000
#: Characters kept of a received move's free texts (as the referee keeps a move's comment); a
#: longer action (a protocol error) is kept to one more character, enough to show it.
MAX_TEXT = 256

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "game_id": str,
    "game": str,
    "params": dict,
    "seat": int,
    "seat_name": str,
    "limits": dict,
    "verdict": str,
    "reason": str,
    "messages": list,
}


class FailurePackError(SdkError, ValueError):
    """Not a usable failure pack; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class Pack:
    """A loaded pack: the raw object, and the messages the referee sent the bot, parsed."""

    raw: dict[str, Any]
    sent: tuple[pb.RefereeMessage, ...]

    @property
    def seat(self) -> int:
        return int(self.raw["seat"])

    @property
    def seat_name(self) -> str:
        return str(self.raw["seat_name"])

    @property
    def verdict(self) -> str:
        return str(self.raw["verdict"])

    @property
    def reason(self) -> str:
        return str(self.raw["reason"])

    @property
    def seed(self) -> int | None:
        seed = self.raw.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def fault_ply(self) -> int | None:
        """The ply of the move the fault took the place of (counted from 1)."""
        ply = self.raw.get("fault_ply")
        if not isinstance(ply, int) or isinstance(ply, bool):
            return None
        return ply + 1 if self.raw["version"] == 1 else ply

    @property
    def limits(self) -> dict[str, Any]:
        return dict(self.raw["limits"])


def encode(message: bytes) -> str:
    """A message's exact bytes as text for the pack."""
    return base64.b64encode(message).decode("ascii")


def load_pack(path: str | Path) -> Pack:
    """Read and check the pack at ``path``; :class:`FailurePackError` (one line) if it is not
    one."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PACK_BYTES + 1)
    except OSError as exc:
        raise FailurePackError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    return parse_pack(data, str(path))


def parse_pack(data: bytes, where: str = "pack") -> Pack:
    """Check the bytes of a pack (as :func:`load_pack`)."""
    if len(data) > MAX_PACK_BYTES:
        raise FailurePackError(
            f"{where}: larger than {MAX_PACK_BYTES // (1024 * 1024)} MB: not a pack"
        )
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FailurePackError(f"{where}: not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise FailurePackError(f"{where}: not a failure pack (no format {FORMAT!r})")
    if raw.get("version") not in READS:
        raise FailurePackError(
            f"{where}: pack version {raw.get('version')!r}; this SDK reads versions "
            f"{', '.join(map(str, READS))}"
        )
    for key, kind in _REQUIRED.items():
        if not isinstance(raw.get(key), kind) or isinstance(raw.get(key), bool):
            raise FailurePackError(f"{where}: field {key!r} missing or not a {_name(kind)}")
    return Pack(raw, _sent(raw["messages"], where))


def _sent(messages: list[Any], where: str) -> tuple[pb.RefereeMessage, ...]:
    out = []
    for index, entry in enumerate(messages):
        if not isinstance(entry, dict):
            raise FailurePackError(f"{where}: message {index} is not an object")
        text = entry.get("to_bot")
        if text is None:
            continue
        try:
            message = pb.RefereeMessage.FromString(base64.b64decode(text, validate=True))
        except (ValueError, DecodeError) as exc:
            raise FailurePackError(f"{where}: message {index} cannot be decoded ({exc})") from None
        out.append(message)
    if not out or out[0].WhichOneof("kind") != "game_start":
        raise FailurePackError(f"{where}: the messages do not begin with the game's start")
    return tuple(out)


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {str: "string", int: "number", dict: "object", list: "list"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)
