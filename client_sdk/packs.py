"""Failure packs: one faulted seat's side of a finished game, enough to replay it on a laptop.

The referee writes a pack for the seat at fault (``referee.match.packs``, with the format,
limits and encoding named here); ``python -m client_sdk reproduce`` reads one back and replays
it against the bot. The format is in ``docs/records.md``.

    from client_sdk.packs import load_pack
    pack = load_pack("failure-pack.json")
    print(pack.verdict, pack.reason, len(pack.sent))
"""

from client_sdk._pack import (
    FORMAT,
    MAX_PACK_BYTES,
    MAX_TEXT,
    OUTPUT_TAIL_CHARS,
    VERSION,
    FailurePackError,
    Pack,
    encode,
    load_pack,
    parse_pack,
)

__all__ = [
    "FORMAT",
    "MAX_PACK_BYTES",
    "MAX_TEXT",
    "OUTPUT_TAIL_CHARS",
    "VERSION",
    "FailurePackError",
    "Pack",
    "encode",
    "load_pack",
    "parse_pack",
]
