"""A finished game stays finished: a bot whose process exits the instant its game-ending move
has left it (its stream closing right behind the move) keeps the result that move made, even
when the referee learns of the exit before the move arrives."""

from __future__ import annotations

import asyncio

import pytest
from fault_helpers import Proxy, faultbot, sdk_bot

from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.play.local import MatchResult, local_referee

pytestmark = pytest.mark.slow

TC = TimeControl(game_time_s=120, move_time_s=20.0)


def test_a_stream_closed_right_after_the_last_move_never_changes_the_result() -> None:
    """The closing bot makes the last move (the turn limit) and exits at once; its move reaches
    the referee a second after its process is seen to end (a lagging link). The game ends by
    the turn limit, not as a crash or disconnect of the bot that made the move."""
    # Four plies: BLUE (seat 1) makes the last one.
    short = load_game("tetress", turn_limit=4)

    async def main() -> MatchResult:
        async with local_referee() as ref:
            lagging = Proxy(ref.address, lag_s=1.0)
            await lagging.start()
            try:
                return await ref.play(
                    short,
                    [sdk_bot(), faultbot("lastclose")],
                    time_control=TC,
                    via=(None, lagging.address),
                )
            finally:
                await lagging.close()

    result = asyncio.run(main())
    out = result.output(1)
    assert "closing after my last move at ply 3" in out, out
    end = result.report.end
    assert end is not None
    assert end.verdict == "turn_limit" and end.offender is None, (end, out)
    assert result.report.plies == 4
