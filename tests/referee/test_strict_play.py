"""Strict input on the Play stream (real server, 127.0.0.1 port 0): a Hello field out of
bounds is refused naming the field, a bot's name is cleaned before it is used, and a move's
over-long text or hostile comment cannot reach a record or a table as sent."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc

from client_sdk.proto import referee_pb2 as pb
from engine.registry import load_game
from referee.match.runner import MatchRunner
from referee.server import bounds
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable
from referee.server.session import BotSession

METHOD = "/tetromino.referee.v1.Referee/Play"
HOSTILE = "\x1b[2J\x1b]8;;http://evil.example\x07click\x1b]8;;\x07[red]x[/red]\n\u202eevil"


async def _first_reply(
    address: str, hello: pb.Hello, held: list[BotSession] | None = None, server: Any = None
) -> pb.RefereeMessage:
    """The referee's first answer to ``hello``; with ``server``, the session it holds for
    this stream is appended to ``held`` while the stream is still open."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        await call.write(pb.BotMessage(hello=hello))
        async with asyncio.timeout(10):
            reply = await call.read()
            if server is not None and held is not None:
                held.append(await server.lobby.wait_for(lambda _: True))
        call.cancel()
        assert reply is not grpc.aio.EOF
        return reply  # type: ignore[no-any-return]


def _hello(**fields: Any) -> pb.Hello:
    fields.setdefault("bot_name", "probe")
    fields.setdefault("token", "good")
    fields.setdefault("protocol_version", pb.PROTOCOL_VERSION_CURRENT)
    return pb.Hello(**fields)


BAD_HELLOS: dict[str, dict[str, Any]] = {
    "Hello.bot_name": {"bot_name": "n" * 300},
    "Hello.bot_version": {"bot_version": "1\x1b[31m"},
    "Hello.token": {"token": "t" * 600},
    "Hello.sdk_version": {"sdk_version": "s" * 300},
    "Hello.resume_session_id": {"resume_session_id": "r" * 100},
    "Hello.games": {"games": ["tetress"] * 17},
    "Hello.wanted_games": {"wanted_games": ["g" * 40]},
    "Hello.max_games": {"max_games": 2**32 - 1},
    "Hello.metadata": {"metadata": {f"k{i}": "v" for i in range(33)}},
    "Hello.metadata['k']": {"metadata": {"k": "v" * 2000}},
    "Hello.channel": {"channel": "two words"},
    "Hello.challenge": {"challenge": "c" * 300},
}


def test_each_bad_hello_field_is_refused_naming_it() -> None:
    """Every Hello field beyond its bound gets a fatal BAD_MESSAGE whose message starts with
    the field's name; a Hello at the bounds is welcomed afterwards."""

    async def main() -> tuple[dict[str, pb.RefereeMessage], pb.RefereeMessage]:
        server = RefereeServer(auth=TokenTable({"good": "p1"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        try:
            refused = {f: await _first_reply(address, _hello(**kw)) for f, kw in BAD_HELLOS.items()}
            at_bounds = _hello(
                bot_name="n" * bounds.MAX_HELLO_NAME_CHARS,
                max_games=bounds.MAX_GAMES_PER_SESSION,
                games=["tetress"] * bounds.MAX_GAME_NAMES,
                channel="c" * bounds.MAX_CHANNEL_CHARS,
            )
            return refused, await _first_reply(address, at_bounds)
        finally:
            await server.stop(0)

    refused, welcome = asyncio.run(main())
    for field, reply in refused.items():
        assert reply.WhichOneof("kind") == "error", (field, reply)
        assert reply.error.code == pb.ERROR_CODE_BAD_MESSAGE and reply.error.fatal
        assert reply.error.message.startswith(f"{field}: "), (field, reply.error.message)
        assert len(reply.error.message) < 200
    assert welcome.WhichOneof("kind") == "welcome"
    assert welcome.welcome.bot_name == "n" * 64


def test_a_hostile_hello_name_is_cleaned_before_it_is_used() -> None:
    """Escape sequences, markup brackets, a newline and a right-to-left override in a bot's
    name never reach the name the referee uses: it is letters, digits and ``-_.`` only."""

    async def main() -> tuple[pb.RefereeMessage, str]:
        server = RefereeServer(auth=TokenTable({"good": "p1"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        try:
            held: list[BotSession] = []
            hello = _hello(bot_name=HOSTILE, bot_version="v 2\u202e")
            reply = await _first_reply(address, hello, held, server)
            return reply, held[0].version
        finally:
            await server.stop(0)

    reply, version = asyncio.run(main())
    name = reply.welcome.bot_name
    assert name and all(c.isascii() and (c.isalnum() or c in "-_.") for c in name), name
    assert "evil" in name and len(name) <= 64
    assert version == "v_2"


async def _hostile_bot(
    address: str, token: str, action_chars: int, error: pb.Error | None = None
) -> None:
    """Plays legal moves with a hostile comment; its third move's text is ``action_chars``
    long (0: always legal), or it sends ``error`` instead of its third move."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        await call.write(pb.BotMessage(hello=_hello(bot_name=token, token=token)))
        games: dict[str, Any] = {}
        rng = random.Random(token)
        while (message := await call.read()) is not grpc.aio.EOF:
            kind = message.WhichOneof("kind")
            if kind == "game_start":
                spec = message.game_start.info.game
                games[message.game_start.game_id] = load_game(spec.name, **dict(spec.params))
            elif kind == "move_request":
                req = message.move_request
                state = games[req.game_id].state_from_string(req.position)
                action = games[req.game_id].move_to_text(rng.choice(list(state.legal_moves)))
                if action_chars and req.ply >= 2:
                    action = "P" * action_chars
                if error is not None and req.ply >= 2:
                    error.game_id = req.game_id
                    await call.write(pb.BotMessage(error=error))
                    continue
                comment = HOSTILE * 40
                move = pb.Move(game_id=req.game_id, ply=req.ply, action=action, comment=comment)
                await call.write(pb.BotMessage(move=move))
            elif kind in ("goodbye", "game_over"):
                break
        call.cancel()


def test_an_over_long_move_text_is_a_protocol_error_and_comments_are_cleaned() -> None:
    """A move text beyond the bound ends the game as a protocol error saying so (the text is
    never parsed); comments are kept cut to the bound, with no control character left."""

    async def main() -> Any:
        server = RefereeServer(auth=TokenTable({"a": "a", "b": "b"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        bots = [asyncio.create_task(_hostile_bot(address, "a", 0))]
        bots.append(asyncio.create_task(_hostile_bot(address, "b", 20_000)))
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
    assert report.end is not None and report.end.verdict == "protocol_error"
    assert report.end.offender == 1
    assert "move text of 20000 characters (at most 256)" in report.end.reason
    assert report.moves
    for move in report.moves:
        assert 0 < len(move.comment) <= bounds.MAX_COMMENT_CHARS
        assert "click[red]x[/red]" in move.comment
        assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in move.comment)
        assert "\u202e" not in move.comment


def _game_with(error: pb.Error) -> Any:
    async def main() -> Any:
        server = RefereeServer(auth=TokenTable({"a": "a", "b": "b"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        bots = [asyncio.create_task(_hostile_bot(address, "a", 0))]
        bots.append(asyncio.create_task(_hostile_bot(address, "b", 0, error)))
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

    return asyncio.run(main())


def test_a_bot_error_report_is_cleaned_and_an_unknown_code_is_named() -> None:
    """A bot's runtime-error report keeps its last line without escapes; an error with no
    message and a code no protocol version defines ends the game naming the number (it used
    to break the session's reader)."""
    hostile = _game_with(
        pb.Error(code=pb.ERROR_CODE_BOT_RUNTIME_ERROR, message="Traceback\n\x1b[2JBoom\x07")
    )
    assert hostile.end.verdict == "runtime_error"
    assert hostile.end.reason == "BLUE's bot failed: Boom"
    unknown = _game_with(pb.Error(code=999))  # type: ignore[arg-type]
    assert unknown.end.verdict == "runtime_error"
    assert unknown.end.reason == "BLUE's bot failed: error code 999"
