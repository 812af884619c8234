"""The pack format without processes: what a reader refuses (one line each), and what a
writer keeps of a bot's own move texts."""

from __future__ import annotations

import base64
import json

import pytest

from client_sdk._pack import FORMAT, MAX_PACK_BYTES, FailurePackError, parse_pack
from client_sdk.proto import referee_pb2 as pb
from referee.match.packs import MAX_TEXT, _bounded, pack_path


def _pack(**fields: object) -> bytes:
    start = pb.RefereeMessage(game_start=pb.GameStart(game_id="g")).SerializeToString()
    raw: dict[str, object] = {
        "format": FORMAT,
        "version": 2,
        "game_id": "g",
        "game": "tetress",
        "params": {},
        "seat": 0,
        "seat_name": "RED",
        "limits": {},
        "verdict": "time",
        "reason": "RED exceeded its time",
        "messages": [{"t": 0.0, "to_bot": base64.b64encode(start).decode()}],
    }
    raw.update(fields)
    return json.dumps(raw).encode()


def test_a_well_formed_pack_is_read() -> None:
    """The minimal pack parses, with its first message the game's start."""
    pack = parse_pack(_pack())
    assert pack.seat_name == "RED" and pack.sent[0].WhichOneof("kind") == "game_start"


def test_a_version_1_pack_is_read_in_the_one_numbering() -> None:
    """A version 1 pack counted its fault's ply from 0: it is read counted from 1, as a
    version 2 pack says it."""
    assert parse_pack(_pack(version=1, fault_ply=6)).fault_ply == 7
    assert parse_pack(_pack(fault_ply=7)).fault_ply == 7


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"[1, 2", "not JSON"),
        (b'"a string"', "not a failure pack"),
        (_pack(version=3), "pack version 3"),
        (_pack(seat="zero"), "field 'seat' missing or not a number"),
        (_pack(seat=True), "field 'seat'"),
        (_pack(messages=[{"to_bot": "%%%"}]), "message 0 cannot be decoded"),
        (_pack(messages=[{"to_bot": base64.b64encode(b"\xff\xff").decode()}]), "message 0"),
        (_pack(messages=[]), "do not begin with the game's start"),
        (_pack(messages=["x"]), "message 0 is not an object"),
        (b" " * (MAX_PACK_BYTES + 1), "larger than 4 MB"),
    ],
)
def test_a_bad_pack_is_refused_in_one_line(data: bytes, words: str) -> None:
    """Each kind of bad pack is a FailurePackError whose one line says what is wrong."""
    with pytest.raises(FailurePackError) as refused:
        parse_pack(data, "p.json")
    text = str(refused.value)
    assert words in text and "\n" not in text and text.startswith("p.json: ")


def test_a_bots_own_long_texts_are_cut_in_its_pack() -> None:
    """A bot cannot swell its pack with a huge comment or note; a long action keeps enough
    to show it was over the limit."""
    move = pb.Move(ply=3, action="X" * 100_000, comment="c" * 100_000)
    move.not_a_move.returned = "r" * 100_000
    kept = pb.Move.FromString(_bounded(move))
    assert len(kept.comment) == MAX_TEXT and len(kept.not_a_move.returned) == MAX_TEXT
    assert len(kept.action) == MAX_TEXT + 1 and kept.ply == 3


def test_packs_are_named_beside_the_record() -> None:
    """game.json's BLUE pack is game.blue.failure.json in the same folder."""
    assert str(pack_path("out/game.json", "BLUE")) == "out/game.blue.failure.json"
