"""The challenge desk against hostile or silent challenged bots: no answer is a refusal the
challenger hears, stray answers are dropped, and the challenged bot is released afterwards."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from client_sdk import run
from client_sdk._challenge import ChallengeRefused
from client_sdk.examples.random_bot import RandomBot
from client_sdk.proto import referee_pb2 as pb
from engine.registry import load_game
from referee.hosting.matchmaker import Matchmaker
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable

pytestmark = pytest.mark.slow

METHOD = "/tetromino.referee.v1.Referee/Play"


async def _silent_bot(address: str, seen: list[pb.RefereeMessage], ready: asyncio.Event) -> None:
    """Says hello as bob's "mute", sends answers to offers it never got, then only listens."""
    channel = grpc.aio.insecure_channel(address)
    call = channel.stream_stream(
        METHOD,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )()
    hello = pb.Hello(bot_name="mute", token="b", protocol_version=pb.PROTOCOL_VERSION_CURRENT)
    await call.write(pb.BotMessage(hello=hello))
    for n in range(20):
        stray = pb.ChallengeAnswer(challenge_id=f"forged-{n}", accept=True)
        await call.write(pb.BotMessage(challenge_answer=stray))
    ready.set()
    try:
        while (message := await call.read()) is not grpc.aio.EOF:
            seen.append(message)
    finally:
        call.cancel()
        await channel.close()


async def _challenge_mute(
    reserved: Callable[[Any], bool] | None = None,
) -> tuple[str, list[pb.RefereeMessage], Matchmaker, bool]:
    """alice's bot challenges bob's silent "mute" through a real server and matchmaker (1 s to
    answer); returns what alice was told, what mute received, the matchmaker, and whether mute
    is still connected and free for casual play afterwards."""
    server = RefereeServer(auth=TokenTable({"a": "alice", "b": "bob"}), games=["tetress"])
    address = await server.start("127.0.0.1:0")
    matchmaker = Matchmaker(
        server.lobby, [load_game("tetress")], challenge_answer_s=1.0, reserved=reserved
    )
    pairing = asyncio.create_task(matchmaker.run())
    seen: list[pb.RefereeMessage] = []
    ready = asyncio.Event()
    mute = asyncio.create_task(_silent_bot(address, seen, ready))
    try:
        await ready.wait()
        await server.lobby.wait_for(lambda s: s.name == "mute", 30)
        try:
            await asyncio.to_thread(
                run, RandomBot, address, "a", name="rnd", challenge="bob/mute",
                reconnect=False, log=lambda _line: None,
            )  # fmt: skip
            told = ""
        except ChallengeRefused as exc:
            told = str(exc)
        session = next(s for s in server.lobby.sessions() if s.name == "mute")
        open_still = not session.closed.is_set()
        return told, seen, matchmaker, open_still and not matchmaker.desk.withheld(session)
    finally:
        pairing.cancel()
        mute.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(pairing, mute)
        await server.stop(0)


def _offers(seen: list[pb.RefereeMessage]) -> list[pb.ChallengeOffer]:
    return [m.challenge_offer for m in seen if m.WhichOneof("kind") == "challenge_offer"]


def test_unanswered_challenge_is_refused_and_the_bot_released() -> None:
    """A challenged bot that never answers (and forged answers beforehand) costs the
    challenger only the answer time: it is told so, and the bot is free for casual play."""
    told, seen, matchmaker, released = asyncio.run(_challenge_mute())
    assert told == "bob/mute did not answer your challenge within 1 s"
    offers = _offers(seen)
    assert len(offers) == 1 and offers[0].challenger == "alice/rnd"
    assert offers[0].game == "tetress" and offers[0].answer_within_s == 1.0
    assert released
    assert matchmaker.running == set()


def test_a_bot_reserved_for_a_tournament_cannot_be_challenged() -> None:
    """A challenge naming a bot a tournament on this server needs is refused before any offer
    reaches that bot, and the challenger hears why."""
    told, seen, _, _ = asyncio.run(_challenge_mute(reserved=lambda session: session.name == "mute"))
    assert told == "bob/mute is playing in a tournament; challenge it afterwards"
    assert _offers(seen) == []
