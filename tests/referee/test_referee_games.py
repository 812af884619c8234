"""Whole games through a real referee server with bots as real subprocesses."""

from __future__ import annotations

import asyncio

from referee_harness import arena, rawbot, sdk_bot

from engine.records import read_record, verify_record, write_record
from engine.registry import game_names, load_game
from referee.clock import TimeControl
from referee.match import GameReport
from referee.record import build_record


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
        players = [f"{n}{k}{i}" for n in names for k in "rs" for i in range(2)]
        async with arena(players) as box:
            games = []
            for name in names:
                game = load_game(name)
                games.append(box.game(game, [rawbot(), rawbot()], f"{name}r"))
                games.append(box.game(game, [sdk_bot(), sdk_bot()], f"{name}s"))
            return await asyncio.gather(*games)

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
        "slow": (tetress, ["--behaviour", "sleep", "--sleep", "6", "--at", "3"], "time"),
        "crash": (att, ["--behaviour", "crash", "--at", "3"], "runtime_error"),
        "error": (tetress, ["--behaviour", "error", "--at", "5"], "runtime_error"),
    }
    # Generous: a healthy bot on a loaded machine must never run out of time here.
    quick = TimeControl(game_time_s=60, move_time_s=2.0, grace_s=0.25)

    async def main() -> tuple[dict[str, GameReport], GameReport, GameReport]:
        players = [f"{c}{i}" for c in [*cases, "ok", "after"] for i in range(2)]
        async with arena(players) as box:
            bad = {
                name: box.game(game, [rawbot(), rawbot(*flags)], name, time_control=quick)
                for name, (game, flags, _) in cases.items()
            }
            normal = box.game(tetress, [sdk_bot(), sdk_bot()], "ok", time_control=quick)
            results = await asyncio.gather(normal, *bad.values())
            # The server still takes new sessions and games after all that.
            after = await box.game(att, [rawbot(), sdk_bot()], "after")
            return dict(zip(bad, results[1:], strict=True)), results[0], after

    faulty, normal, after = asyncio.run(main())
    for name, report in faulty.items():
        end = report.end
        assert end is not None
        expected = cases[name][2]
        assert end.verdict == expected, (name, end)
        assert end.offender == 1 and end.winner == 0, (name, end)
        assert report.seat_names[1] in end.reason
    slow = faulty["slow"].end
    assert slow is not None and "exceeded its time: used" in slow.reason
    assert "of 2.00 s for move 4" in slow.reason
    illegal = faulty["illegal"].end
    assert illegal is not None and "played an illegal move PLACE(" in illegal.reason
    error = faulty["error"].end
    assert error is not None and "ZeroDivisionError" in error.reason
    for report in (normal, after):
        assert report.end is not None and report.end.verdict in ("normal", "turn_limit")
