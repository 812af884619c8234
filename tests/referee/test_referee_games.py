"""Whole games through a real referee server with bots as real subprocesses."""

from __future__ import annotations

import asyncio

import pytest
from rawbots import rawbot, sdk_bot

from engine.records import read_record, verify_record, write_record
from engine.registry import game_names, load_game
from referee.match.clock import ClockMode, TimeControl
from referee.match.records import build_record
from referee.match.runner import GameReport
from referee.play.local import local_referee

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def _replays(report: GameReport) -> None:
    game = load_game(report.game, **report.params)
    state = game.state_from_string(report.initial_position)
    for entry in report.moves:
        state.apply(game.move_from_text(entry.action))
    assert state.to_string() == report.final_position
    record = verify_record(build_record(report, game))  # raises RecordError if inconsistent
    again = read_record(write_record(record))
    assert again.plies == report.plies
    assert again.result == report.end.result()  # type: ignore[union-attr]


def test_complete_games_of_every_registered_game() -> None:
    """Every registered game is played to a rules ending, by raw-protocol bots and SDK bots."""
    names = game_names()
    assert {"tetress", "att"} <= set(names)

    async def main() -> list[GameReport]:
        async with local_referee() as ref:
            games = []
            for name in names:
                game = load_game(name)
                games.append(ref.play(game, [rawbot(), rawbot()]))
                games.append(ref.play(game, [sdk_bot(), sdk_bot()]))
            return [result.report for result in await asyncio.gather(*games)]

    reports = asyncio.run(main())
    assert len(reports) == 2 * len(names)
    for report in reports:
        end = report.end
        assert end is not None
        assert end.verdict in ("normal", "turn_limit"), end.reason
        assert report.plies > 0
        assert end.reason
        _replays(report)
        # Every move has both the referee's time and the bot's own report.
        assert all(m.time_s >= 0 and m.think_time_s >= 0 for m in report.moves)
    sdk_reports = [r for r in reports if r.seats[0].name != "rawbot"]
    assert all(r.seats[0].peak_rss_bytes > 0 for r in sdk_reports)


def test_faults_get_their_verdicts_while_the_server_keeps_serving() -> None:
    """Illegal, unreadable, malformed and empty messages, a timeout, a crash and a bot error
    each end their game with the right verdict; a normal game on the same server finishes."""
    tetress = load_game("tetress")
    att = load_game("att")
    cases = {
        "illegal": (tetress, ["--behaviour", "illegal", "--at", "4"], "illegal_move"),
        "garbage": (att, ["--behaviour", "garbage", "--at", "3"], "illegal_move"),
        "malformed": (tetress, ["--behaviour", "malformed", "--at", "3"], "protocol_error"),
        "empty": (att, ["--behaviour", "empty", "--at", "1"], "protocol_error"),
        "slow": (tetress, ["--behaviour", "sleep", "--sleep", "30", "--at", "3"], "time"),
        "crash": (att, ["--behaviour", "crash", "--at", "3"], "runtime_error"),
        "error": (tetress, ["--behaviour", "error", "--at", "5"], "runtime_error"),
    }
    # Generous: a healthy bot on a loaded machine must never run out of time here. CPU clocks
    # (a busy machine does not charge a bot), except for the sleeper: on a wall clock, so that
    # sleeping through its move limit runs out of time, with a move limit no healthy move
    # reaches however loaded the machine.
    quick = TimeControl(game_time_s=60, move_time_s=2.0, grace_s=0.25)
    wall = TimeControl(game_time_s=60, move_time_s=8.0, grace_s=0.25, clock=ClockMode.WALL)

    async def main() -> tuple[dict[str, GameReport], GameReport, GameReport]:
        async with local_referee() as ref:
            bad = {
                name: ref.play(
                    game,
                    [rawbot(), rawbot(*flags)],
                    time_control=wall if name == "slow" else quick,
                )
                for name, (game, flags, _) in cases.items()
            }
            normal = ref.play(tetress, [sdk_bot(), sdk_bot()], time_control=quick)
            results = [r.report for r in await asyncio.gather(normal, *bad.values())]
            # The server still takes new sessions and games after all that.
            after = await ref.play(att, [rawbot(), sdk_bot()])
            return dict(zip(bad, results[1:], strict=True)), results[0], after.report

    faulty, normal, after = asyncio.run(main())
    for name, report in faulty.items():
        end = report.end
        assert end is not None
        expected = cases[name][2]
        assert end.verdict == expected, (name, end)
        assert end.offender == 1 and end.winner == 0, (name, end)
        assert report.seat_names[1] in end.reason
    slow = faulty["slow"].end
    assert slow is not None and "exceeded its wall time: used" in slow.reason
    assert "of 8.00 s for ply 4" in slow.reason
    illegal = faulty["illegal"].end
    assert illegal is not None and "played an illegal move PLACE(" in illegal.reason
    error = faulty["error"].end
    assert error is not None and "ZeroDivisionError" in error.reason
    for report in (normal, after):
        assert report.end is not None and report.end.verdict in ("normal", "turn_limit")
