"""Think records: what a bot says it thought, carried by the protocol, bounded by the referee,
kept in the record, and never part of a verdict (real referee on 127.0.0.1 port 0, real bots)."""

from __future__ import annotations

import asyncio
import math
import random
from pathlib import Path
from typing import Any

import grpc
import pytest
from rawbots import sdk_bot

from client_sdk.proto import referee_pb2 as pb
from engine.records.search import SearchInfo
from engine.registry import load_game
from referee.match import thinking
from referee.match.records import build_record
from referee.match.report import MoveLog
from referee.match.runner import MatchRunner
from referee.match.thinking import ThinkOutOfBounds, take_think, think_record, think_size
from referee.play.local import local_referee
from referee.sandbox.launch import BotSpec
from referee.server import bounds
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable

METHOD = "/tetromino.referee.v1.Referee/Play"
COURSE_THINKER = Path(__file__).parent / "bots" / "course_thinker"

OUT_OF_BOUNDS: dict[str, pb.ThinkRecord] = {
    "ThinkRecord.depth": pb.ThinkRecord(depth=1001),
    "ThinkRecord.score": pb.ThinkRecord(score=math.nan),
    "ThinkRecord.pv": pb.ThinkRecord(pv=["x"] * 33),
    "ThinkRecord.pv move": pb.ThinkRecord(pv=["P" * 65]),
}


@pytest.mark.parametrize("field", sorted(OUT_OF_BOUNDS))
def test_a_think_record_out_of_bounds_is_refused_naming_the_field(field: str) -> None:
    """Each bound refuses naming its field (the runner then drops the record)."""
    with pytest.raises(ThinkOutOfBounds, match=field.replace(".", r"\.")):
        think_record(OUT_OF_BOUNDS[field])


def test_think_text_is_cleaned_and_cut_and_an_empty_record_is_nothing() -> None:
    """Free text loses control characters and is cut; a record saying nothing is None."""
    kept = think_record(pb.ThinkRecord(text="\x1b[2Jhi\x07" + "y" * 500, score=-inf_ok()))
    assert kept is not None and kept.text.startswith("hi") and len(kept.text) == 200
    assert "\x1b" not in kept.text and "\x07" not in kept.text
    assert think_record(pb.ThinkRecord()) is None
    with pytest.raises(ThinkOutOfBounds, match="control or invisible character"):
        think_record(pb.ThinkRecord(pv=["PLACE(\x1b[31m)"]))


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200f", "\u200b"])
def test_a_pv_move_with_a_bidi_or_invisible_character_is_refused(char: str) -> None:
    """A right-to-left override (or isolate, mark, zero-width space) in a PV move would show
    the line reversed or forged on every page: the record is refused, naming the character."""
    with pytest.raises(ThinkOutOfBounds, match=f"U\\+{ord(char):04X}"):
        think_record(pb.ThinkRecord(pv=["a1", f"PLACE{char}(b2)"]))


def inf_ok() -> float:
    return 1e9


def test_a_seat_past_its_game_budget_has_later_records_dropped() -> None:
    """Records count per seat: past the per-game budget a seat's records are dropped, while
    the other seat's are still kept."""
    big = pb.ThinkRecord(text="t" * 200, pv=["P" * 64] * 32)
    size = think_size(think_record(big))  # type: ignore[arg-type]
    earlier = [
        MoveLog(i, 0, "a", 0.1, 0.1, 0, None, search=think_record(big))
        for i in range(bounds.MAX_THINK_CHARS_PER_GAME // size)
    ]
    assert take_think(pb.Move(think=big), 0, earlier) is None
    assert take_think(pb.Move(think=big), 1, earlier) is not None
    assert take_think(pb.Move(), 1, earlier) is None


async def _thinking_bot(address: str, token: str) -> None:
    """Plays random legal moves; each move carries a think record, every third one out of
    bounds, the others as large as the bounds allow (so the game budget runs out)."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        hello = pb.Hello(bot_name=token, token=token, protocol_version=pb.PROTOCOL_VERSION_CURRENT)
        await call.write(pb.BotMessage(hello=hello))
        games: dict[str, Any] = {}
        rng = random.Random(token)
        while (message := await call.read()) is not grpc.aio.EOF:
            kind = message.WhichOneof("kind")
            if kind == "game_start":
                spec = message.game_start.info.game
                games[message.game_start.game_id] = load_game(spec.name, **dict(spec.params))
            elif kind == "move_request":
                req = message.move_request
                game = games[req.game_id]
                state = game.state_from_string(req.position)
                action = game.move_to_text(rng.choice(list(state.legal_moves)))
                bad = list(OUT_OF_BOUNDS.values())
                think = (
                    bad[req.ply // 3 % len(bad)]
                    if req.ply % 3 == 0
                    else pb.ThinkRecord(depth=req.ply, text="n" * 200, pv=[action] * 32)
                )
                move = pb.Move(game_id=req.game_id, ply=req.ply, action=action, think=think)
                await call.write(pb.BotMessage(move=move))
            elif kind in ("goodbye", "game_over"):
                break
        call.cancel()


@pytest.mark.slow
def test_hostile_think_records_never_change_the_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots whose think records are out of bounds or over budget still finish by the rules;
    the record keeps only records in bounds, and each seat's within its game budget (made
    small here so that a short random game reaches it)."""
    monkeypatch.setattr(thinking, "MAX_THINK_CHARS_PER_GAME", 8 * 1024)

    async def main() -> Any:
        server = RefereeServer(auth=TokenTable({"a": "a", "b": "b"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        bots = [asyncio.create_task(_thinking_bot(address, t)) for t in "ab"]
        try:
            sessions = [
                await server.lobby.wait_for(lambda s, p=p: s.identity.player_id == p, 30)
                for p in "ab"
            ]
            report = await MatchRunner(load_game("tetress"), sessions).run()
            await asyncio.wait_for(asyncio.gather(*bots), 30)
        finally:
            await server.stop(0)
        return report

    report = asyncio.run(main())
    assert report.end is not None and report.end.verdict in ("normal", "turn_limit"), report.end
    for move in report.moves:
        if move.ply % 3 == 0:
            assert move.search is None
    for seat in (0, 1):
        kept = [m.search for m in report.moves if m.seat == seat and m.search is not None]
        assert kept and all(s.depth is not None and len(s.pv) == 32 for s in kept)
        assert sum(think_size(s) for s in kept) <= thinking.MAX_THINK_CHARS_PER_GAME
    dropped = [m for m in report.moves if m.ply % 3 and m.search is None]
    assert dropped, "the budget was never reached"
    record = build_record(report, load_game("tetress"))
    assert [m.search for m in record.moves] == [m.search for m in report.moves]


@pytest.mark.slow
def test_the_reference_bot_and_a_course_bot_report_their_thinking() -> None:
    """An SDK agent (the reference bot, via Agent.think) and a course-style agent (via
    self.think_record in action()) have their think records in the game's record, with PVs
    in the game's notation starting with the move played."""

    async def main() -> Any:
        async with local_referee() as ref:
            return await ref.play(
                load_game("tetress"),
                [
                    sdk_bot("client_sdk.examples.reference_bot:Level1"),
                    BotSpec("sdk", str(COURSE_THINKER)),
                ],
            )

    result = asyncio.run(main())
    record = build_record(result.report, load_game("tetress"))
    assert record.moves
    for ply, move in enumerate(record.moves):
        search = move.search
        assert search is not None, f"ply {ply + 1} has no think record"
        assert search.pv[0] == move.san
        if ply % 2 == 0:
            assert search.depth is not None and search.depth >= 1 and search.nodes
            assert search.score is not None
        else:
            assert search == SearchInfo(2, 17, -0.5, (move.san,), "a course bot's note")
