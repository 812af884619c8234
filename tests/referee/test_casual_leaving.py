"""A bot that leaves right after its casual game (its stream closed on the GameOver, no
Goodbye) is not paired again in the moment before the referee sees it go: it is never handed a
game it cannot play, and its opponent is never handed a win by disconnect (real server on
127.0.0.1 port 0, raw protocol clients)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc

from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import referee_pb2_grpc as pb_grpc
from engine.registry import load_game
from referee.hosting.casual_pairing import CasualPairing
from referee.hosting.matchmaker import Matchmaker
from referee.server.app import RefereeServer

TURN_LIMIT = 8
#: A remote bot's round trip: its stream's end reaches the referee this long after it sent
#: the GameOver (the input of the test: what a bot far away does, not a wait for a state).
LATENCY_S = 0.3
#: The rest after a game in this test: far longer than the round trip, however busy the
#: machine (the default, casual_pairing.AFTER_GAME_S, is pinned by the policy's own test).
REST_S = 30.0


@dataclass
class RawBot:
    """A raw-protocol client playing random legal moves; ``leaves``: it closes its stream as
    soon as its first game is over, without a Goodbye."""

    name: str
    leaves: bool
    starts: list[str] = field(default_factory=list)
    overs: list[pb.GameOver] = field(default_factory=list)
    _out: asyncio.Queue[pb.BotMessage | None] = field(default_factory=asyncio.Queue)

    async def _requests(self) -> AsyncIterator[pb.BotMessage]:
        while (message := await self._out.get()) is not None:
            yield message

    async def play(self, address: str) -> None:
        game = load_game("tetress", turn_limit=TURN_LIMIT)
        rng = random.Random(self.name)
        hello = pb.Hello(bot_name=self.name, protocol_version=pb.PROTOCOL_VERSION_CURRENT)
        self._out.put_nowait(pb.BotMessage(hello=hello))
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.RefereeStub(channel).Play(self._requests())
            async for message in call:
                kind = message.WhichOneof("kind")
                if kind == "game_start":
                    self.starts.append(message.game_start.game_id)
                elif kind == "move_request":
                    req = message.move_request
                    state = game.state_from_string(req.position)
                    action = game.move_to_text(rng.choice(list(state.legal_moves)))
                    move = pb.Move(game_id=req.game_id, ply=req.ply, action=action)
                    self._out.put_nowait(pb.BotMessage(move=move))
                elif kind == "game_over":
                    self.overs.append(message.game_over)
                    if self.leaves:
                        # Its stream ends, nothing said, a remote bot's round trip later.
                        await asyncio.sleep(LATENCY_S)
                        self._out.put_nowait(None)
                        return


def test_a_bot_leaving_right_after_its_game_is_not_paired_again() -> None:
    """Two bots play a casual game; one closes its stream on its GameOver (reaching the
    referee a round trip later).
    Once the referee has seen it go and no game is running, exactly one game was played:
    neither bot was handed a second game, and nobody lost or won one by disconnect."""

    async def main() -> tuple[RawBot, RawBot, Matchmaker]:
        server = RefereeServer(games=["tetress"], resume_window=0.5)
        address = await server.start("127.0.0.1:0")
        matchmaker = Matchmaker(
            server.lobby,
            [load_game("tetress", turn_limit=TURN_LIMIT)],
            policy=CasualPairing(rest_s=REST_S),
        )
        pairing = asyncio.create_task(matchmaker.run())
        leaver, stayer = RawBot("leaver", leaves=True), RawBot("stayer", leaves=False)
        staying = asyncio.create_task(stayer.play(address))
        try:
            async with asyncio.timeout(60):
                await leaver.play(address)
                while len(server.lobby) > 1 or matchmaker.running:
                    await _a_change(server, matchmaker)
        finally:
            pairing.cancel()
            staying.cancel()
            await asyncio.gather(pairing, staying, return_exceptions=True)
            await matchmaker.drain(0)
            await server.stop(0)
        return leaver, stayer, matchmaker

    leaver, stayer, matchmaker = asyncio.run(main())
    assert len(leaver.starts) == 1 and len(leaver.overs) == 1
    assert stayer.starts == leaver.starts, "the bot that stayed was handed a second game"
    assert matchmaker.finished == 1
    assert all(o.verdict != pb.VERDICT_DISCONNECT for o in stayer.overs), stayer.overs


async def _a_change(server: RefereeServer, matchmaker: Matchmaker) -> None:
    """Wait until a session comes or goes, or a running game's task ends."""
    lobby = asyncio.ensure_future(server.lobby.wait_change(server.lobby.generation))
    try:
        await asyncio.wait([lobby, *matchmaker.running], return_when=asyncio.FIRST_COMPLETED)
    finally:
        lobby.cancel()
