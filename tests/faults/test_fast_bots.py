"""Flood control never limits a bot that only answers what it is asked, however fast it plays:
two quick bots play many games in a row over the same sessions (far more messages, faster,
than the unrequested-message allowance)."""

from __future__ import annotations

import asyncio

import pytest
from fault_helpers import faultbot

from engine.registry import load_game
from referee.match.runner import MatchRunner
from referee.play.local import local_referee

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def test_fast_bots_playing_many_games_are_never_flood_limited() -> None:
    """60 ATT games back to back over two sessions all end normally (no protocol error)."""

    async def main() -> tuple[list[str], int]:
        async with local_referee() as ref:
            sessions = [(await ref.connect(faultbot(), p, timeout=60))[1] for p in ("a", "b")]
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

    verdicts, moves = asyncio.run(main())
    assert moves > 2 * 1000  # well beyond the allowance of unrequested messages per bot
    assert set(verdicts) <= {"normal", "turn_limit"}, verdicts
