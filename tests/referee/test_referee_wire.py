"""The hand-assembled move requests are what the protobuf library would encode."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from client_sdk.proto import referee_pb2 as pb
from referee.wire import (
    RequestEncoder,
    clocks_field,
    encode_clock,
    encode_clocks,
    encode_move_played,
    text_field,
    varint,
)

_text = st.text(max_size=40)


@given(st.integers(min_value=0, max_value=2**63))
def test_varint_matches_the_library(value: int) -> None:
    """varint() encodes like protobuf's own uint64 field encoding."""
    expected = pb.Move(peak_rss_bytes=value).SerializeToString()
    if value:
        assert expected == b"\x28" + varint(value)


@given(
    game_id=_text,
    ply=st.integers(min_value=0, max_value=10_000),
    position=_text,
    moves=st.lists(_text, max_size=20),
    limit=st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)),
    remaining=st.one_of(st.none(), st.floats(min_value=-10, max_value=1e6)),
    used=st.floats(min_value=0, max_value=1e6),
    with_last=st.booleans(),
)
def test_encoded_request_parses_to_the_same_message(
    game_id: str,
    ply: int,
    position: str,
    moves: list[str],
    limit: float | None,
    remaining: float | None,
    used: float,
    with_last: bool,
) -> None:
    """A request built from cached parts decodes to the library-built equivalent."""
    info = pb.GameInfo(
        game=pb.GameSpec(name="tetress", params={"turn_limit": 150}),
        seat=1,
        seat_names=["RED", "BLUE"],
        initial_position="start",
        players=[pb.Player(name="a"), pb.Player(name="b", version="2")],
        time_control=pb.TimeControl(game_time_s=180, grace_s=0.25),
    )
    clocks = [pb.Clock(seat_name="RED", used_s=used), pb.Clock(seat_name="BLUE")]
    if remaining is not None:
        clocks[0].remaining_s = remaining
    last = pb.MovePlayed(game_id=game_id, ply=ply, seat=1, action="x", time_s=0.5)
    encoder = RequestEncoder(game_id, info)
    for move in moves:
        encoder.add_move(move)
    data = encoder.encode(
        ply,
        position,
        encode_clocks(clocks),
        limit,
        last.SerializeToString() if with_last else None,
    )
    expected = pb.MoveRequest(
        game_id=game_id, ply=ply, position=position, moves=moves, clocks=clocks, info=info
    )
    if limit is not None:
        expected.move_time_limit_s = limit
    if with_last:
        expected.last_move.CopyFrom(last)
    decoded = pb.RefereeMessage.FromString(data)
    assert decoded.WhichOneof("kind") == "move_request"
    assert decoded.move_request == expected
    assert decoded.move_request.HasField("move_time_limit_s") == (limit is not None)


@given(
    game_id=_text,
    ply=st.integers(min_value=0, max_value=10_000),
    seat=st.integers(min_value=0, max_value=1),
    action=_text,
    time_s=st.floats(min_value=0, max_value=1e6),
    position=_text,
    remaining=st.one_of(st.none(), st.floats(min_value=-10, max_value=1e6)),
    used=st.floats(min_value=0, max_value=1e6),
)
def test_encoded_move_played_and_clocks_parse_to_the_same_messages(
    game_id: str,
    ply: int,
    seat: int,
    action: str,
    time_s: float,
    position: str,
    remaining: float | None,
    used: float,
) -> None:
    """Hand-encoded clocks and MovePlayed decode to the library-built equivalents."""
    clocks = [pb.Clock(seat_name="RED", used_s=used), pb.Clock(seat_name="BLUE")]
    if remaining is not None:
        clocks[0].remaining_s = remaining
    parts = [
        encode_clock(text_field(1, "RED"), remaining, used),
        encode_clock(text_field(1, "BLUE"), None, 0.0),
    ]
    assert [pb.Clock.FromString(p) for p in parts] == clocks
    assert pb.Clock.FromString(parts[0]).HasField("remaining_s") == (remaining is not None)
    assert clocks_field(parts) == encode_clocks(clocks)
    data = encode_move_played(text_field(1, game_id), ply, seat, action, time_s, position, parts)
    expected = pb.MovePlayed(
        game_id=game_id,
        ply=ply,
        seat=seat,
        action=action,
        time_s=time_s,
        position=position,
        clocks=clocks,
    )
    assert pb.MovePlayed.FromString(data) == expected
