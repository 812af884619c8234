"""Protocol 2 on the wire: lean move requests, the move list only in GameStart, and both sides
refusing a peer that speaks another protocol version."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest

from client_sdk import SessionError, run
from client_sdk.examples.random_bot import RandomBot
from client_sdk.proto import referee_pb2 as pb
from engine.registry import load_game
from referee.match.runner import MatchRunner
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable

METHOD = "/tetromino.referee.v1.Referee/Play"


async def _raw_bot(address: str, token: str, seen: list[pb.RefereeMessage]) -> None:
    """A bot speaking the protocol by hand: random legal moves, every message kept."""
    channel = grpc.aio.insecure_channel(address)
    call = channel.stream_stream(
        METHOD,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )()
    hello = pb.Hello(bot_name=token, token=token, protocol_version=pb.PROTOCOL_VERSION_CURRENT)
    await call.write(pb.BotMessage(hello=hello))
    games: dict[str, Any] = {}
    rng = random.Random(token)
    try:
        while (message := await call.read()) is not grpc.aio.EOF:
            seen.append(message)
            kind = message.WhichOneof("kind")
            if kind == "game_start":
                spec = message.game_start.info.game
                games[message.game_start.game_id] = load_game(spec.name, **dict(spec.params))
            elif kind == "move_request":
                req = message.move_request
                game = games[req.game_id]
                state = game.state_from_string(req.position)
                action = game.move_to_text(rng.choice(list(state.legal_moves)))
                move = pb.Move(game_id=req.game_id, ply=req.ply, action=action)
                await call.write(pb.BotMessage(move=move))
            elif kind in ("goodbye", "game_over"):
                break
    finally:
        call.cancel()
        await channel.close()


def test_move_requests_do_not_grow_with_the_game() -> None:
    """Every MoveRequest carries the position, the clocks and only the newest move: its size
    stays flat over a whole game, and the move list and game facts are in GameStart only."""

    async def main() -> tuple[list[pb.RefereeMessage], list[pb.RefereeMessage], Any]:
        server = RefereeServer(auth=TokenTable({"a": "a", "b": "b"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        seen: tuple[list[pb.RefereeMessage], list[pb.RefereeMessage]] = ([], [])
        bots = [
            asyncio.create_task(_raw_bot(address, t, s)) for t, s in zip("ab", seen, strict=True)
        ]
        try:
            sessions = [
                await server.lobby.wait_for(lambda s, p=p: s.identity.player_id == p, 30)
                for p in "ab"
            ]
            report = await MatchRunner(load_game("tetress"), sessions).run()
            await asyncio.wait_for(asyncio.gather(*bots), 30)
        finally:
            await server.stop(0)
        return seen[0], seen[1], report

    first, second, report = asyncio.run(main())
    assert report.end is not None and report.end.verdict in ("normal", "turn_limit")
    requests = [m.move_request for m in first + second if m.WhichOneof("kind") == "move_request"]
    assert len(requests) == report.plies >= 20
    sizes = {r.ply: len(pb.RefereeMessage(move_request=r).SerializeToString()) for r in requests}
    # The position string and a few numbers: nothing proportional to the plies played.
    assert max(sizes.values()) - sizes[1] <= 48, sizes
    for request in requests[1:]:
        last = request.last_move
        assert request.HasField("last_move") and last.ply == request.ply - 1
        assert last.action == report.moves[last.ply].action and not last.position
        assert len(request.clocks) == 2
    assert not requests[0].HasField("last_move")
    starts = [m.game_start for m in first + second if m.WhichOneof("kind") == "game_start"]
    assert [s.info.seat for s in starts] == [0, 1] and not any(s.moves for s in starts)


def test_sdk_refuses_a_referee_of_another_protocol_version() -> None:
    """An SDK connecting to a referee that speaks protocol 1 stops with a sentence naming both
    versions instead of misreading its messages."""

    async def old_referee(requests: Any, context: Any) -> Any:
        async for _ in requests:
            welcome = pb.Welcome(
                session_id="s", server_version="tetromino-referee/old", protocol_version=1
            )
            yield pb.RefereeMessage(welcome=welcome)
            await asyncio.sleep(5)
            return

    async def main() -> str:
        server = grpc.aio.server()
        handler = grpc.method_handlers_generic_handler(
            "tetromino.referee.v1.Referee",
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    old_referee,
                    request_deserializer=pb.BotMessage.FromString,
                    response_serializer=pb.RefereeMessage.SerializeToString,
                )
            },
        )
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            with pytest.raises(SessionError) as refused:
                await asyncio.to_thread(
                    run, RandomBot(), f"127.0.0.1:{port}", reconnect=False, log=lambda _: None
                )
            return str(refused.value)
        finally:
            await server.stop(0)

    message = asyncio.run(main())
    assert "speaks protocol version 1" in message and "this SDK speaks 2" in message
