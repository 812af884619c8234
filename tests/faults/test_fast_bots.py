"""Flood control never limits a bot that only answers what it is asked, however fast it plays:
two quick bots play many games in a row over the same sessions (far more messages, faster,
than the unrequested-message allowance)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fault_helpers import faultbot

from engine.registry import load_game
from referee.auth import TokenTable
from referee.launch import launch
from referee.match import MatchRunner
from referee.server import RefereeServer
from referee.session import BotSession


def _player_is(player: str) -> Callable[[BotSession], bool]:
    return lambda session: session.identity.player_id == player


def test_fast_bots_playing_many_games_are_never_flood_limited() -> None:
    """60 ATT games back to back over two sessions all end normally (no protocol error)."""

    async def main() -> tuple[list[str], int]:
        server = RefereeServer(auth=TokenTable({"ta": "a", "tb": "b"}))
        address = await server.start("127.0.0.1:0")
        bots = [await launch(faultbot(), address, token) for token in ("ta", "tb")]
        try:
            sessions = [await server.lobby.wait_for(_player_is(p), 60) for p in ("a", "b")]
            verdicts = []
            moves = 0
            for i in range(60):
                seats = sessions if i % 2 == 0 else sessions[::-1]
                report = await MatchRunner(load_game("att"), seats).run()
                assert report.end is not None
                verdicts.append(str(report.end.verdict))
                moves += report.plies
            for session in sessions:
                await session.goodbye("done")
            return verdicts, moves
        finally:
            await asyncio.gather(*(bot.stop(1.0) for bot in bots))
            await server.stop(0.5)

    verdicts, moves = asyncio.run(main())
    assert moves > 2 * 1000  # well beyond the allowance of unrequested messages per bot
    assert set(verdicts) <= {"normal", "turn_limit"}, verdicts
