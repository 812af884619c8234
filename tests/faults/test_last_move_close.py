"""A finished game stays finished: a bot whose process exits the instant its game-ending move
has left it (its stream closing right behind the move) keeps the result that move made."""

from __future__ import annotations

import asyncio

import pytest
from fault_helpers import faultbot, sdk_bot

from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.match.local import MatchResult, local_referee

pytestmark = pytest.mark.slow

TC = TimeControl(game_time_s=120, move_time_s=10.0)
#: Games played at once, and at most in all, to see enough games end on the closing bot's move.
BATCH = 4
MAX_GAMES = 24
WANTED = 3


def test_a_stream_closed_right_after_the_last_move_never_changes_the_result() -> None:
    """Every game the closing bot ended with its own move ends by the rules (its result
    decided by that move), never as a disconnect or crash of the bot that made it."""
    tetress = load_game("tetress")

    async def main() -> list[MatchResult]:
        ended_by_closer: list[MatchResult] = []
        async with local_referee() as ref:
            played = 0
            while len(ended_by_closer) < WANTED and played < MAX_GAMES:
                batch = await asyncio.gather(
                    *(
                        # Both seat orders: the closer makes the last move in either.
                        ref.play(
                            tetress,
                            [faultbot("lastclose"), sdk_bot()][:: 1 if i % 2 else -1],
                            time_control=TC,
                            # Refereed as a remote bot (half the games): only its stream
                            # speaks for it, not its process.
                            remote=[(i // 2) % 2 == 1, False][:: 1 if i % 2 else -1],
                        )
                        for i in range(BATCH)
                    )
                )
                played += BATCH
                for result in batch:
                    seat = 0 if "lastclose" in result.report.seats[0].name else 1
                    if "closing after my last move" in result.output(seat):
                        ended_by_closer.append(result)
        return ended_by_closer

    results = asyncio.run(main())
    assert len(results) >= WANTED, "too few games ended on the closing bot's move"
    for result in results:
        end = result.report.end
        assert end is not None
        assert end.verdict in ("normal", "turn_limit"), (end, result.output(0), result.output(1))
        assert end.offender is None
