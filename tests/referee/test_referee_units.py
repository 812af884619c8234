"""Clock arithmetic, verdict sentences, bot specs, output buffers and log lines."""

from __future__ import annotations

import io
import json
import sys

import pytest
import structlog

from engine.adjudication import verdicts
from engine.adjudication.verdicts import Verdict
from engine.outcome import Outcome, Termination
from referee.match.clock import SeatClock, TimeControl
from referee.sandbox.launch import parse_bot_spec
from referee.server.auth import read_token_file
from referee.telemetry import logs as referee_logging


def test_allowance_is_the_smaller_of_move_limit_and_budget() -> None:
    """The binding limit is the per-move limit until the budget left is smaller."""
    clock = SeatClock(TimeControl(game_time_s=10, move_time_s=2, grace_s=0.5))
    first = clock.allowance()
    assert first.limit == 2 and first.per_move and first.deadline == 2.5
    clock.charge(9)
    second = clock.allowance()
    assert second.limit == pytest.approx(1) and not second.per_move
    assert second.deadline == pytest.approx(1.5)


def test_grace_used_is_charged_so_it_cannot_be_spent_twice() -> None:
    """Time taken within the grace still comes off the budget, which can go below zero."""
    clock = SeatClock(TimeControl(game_time_s=1, grace_s=0.5))
    allowance = clock.allowance()
    assert not clock.over(1.4, allowance)
    clock.charge(1.4)
    assert clock.remaining == pytest.approx(-0.4)
    assert clock.allowance().deadline == pytest.approx(0.1)
    assert clock.over(0.2, clock.allowance())


def test_increment_only_after_an_accepted_move() -> None:
    """The Fischer increment is earned by accepted moves, not by rejected ones."""
    clock = SeatClock(TimeControl(game_time_s=5, increment_s=1))
    clock.charge(2)
    assert clock.remaining == pytest.approx(4)
    clock.charge(1, accepted=False)
    assert clock.remaining == pytest.approx(3)
    assert clock.used == pytest.approx(3)


def test_no_limits_means_no_deadline() -> None:
    """With neither budget nor move limit a move has no deadline."""
    clock = SeatClock(TimeControl(game_time_s=0))
    assert clock.allowance().deadline is None
    assert not clock.over(1e9, clock.allowance())
    with pytest.raises(ValueError):
        TimeControl(game_time_s=-1)


def test_verdict_sentences() -> None:
    """The sentences bot authors see read as documented."""
    assert (
        verdicts.time_sentence("BLUE", 2.314, 2.0, 17, "CPU time")
        == "BLUE exceeded its CPU time: used 2.31 s of 2.00 s for ply 17"
    )
    assert verdicts.illegal_sentence("RED", "PLACE(3-4)", "cell 3-4 is occupied") == (
        "RED played an illegal move PLACE(3-4): cell 3-4 is occupied"
    )
    end = verdicts.fault(Verdict.TIME, 1, "x")
    assert (end.winner, end.result(), end.termination, end.offender) == (0, "1-0", "time", 1)
    assert verdicts.aborted("stop").result() == "*"
    assert verdicts.aborted("stop").winner_name(("RED", "BLUE")) == "ABORTED"
    assert Verdict.TIME.label == "TLE" and Verdict.MEMORY.label == "MLE"


def test_rules_endings_map_to_normal_or_turn_limit() -> None:
    """A rules outcome becomes a normal end, or a turn-limit end with draws worded as such."""
    seats = ("RED", "BLUE")
    normal = verdicts.rules_end(Outcome(Termination.NO_LEGAL_MOVE, 1), seats, 40)
    assert normal.verdict is Verdict.NORMAL
    assert normal.reason == "RED has no legal move; BLUE wins"
    limit = verdicts.rules_end(Outcome(Termination.TURN_LIMIT, None), seats, 150)
    assert limit.verdict is Verdict.TURN_LIMIT and limit.result() == "1/2-1/2"
    assert "draw" in limit.reason


def test_bot_specs_are_classified() -> None:
    """Directories and modules go through the SDK runner; anything else is a command."""
    sdk = parse_bot_spec("client_sdk/examples/course_random")
    assert sdk.kind == "sdk" and sdk.label == "course_random"
    module = parse_bot_spec("client_sdk.examples.random_bot:Agent")
    assert module.kind == "sdk"
    argv = module.argv("127.0.0.1:1", "-tok")
    assert argv[:3] == [sys.executable, "-m", "client_sdk"] and "--token=-tok" in argv
    command = parse_bot_spec("./mybot --fast --server {server}")
    assert command.kind == "command"
    assert "127.0.0.1:1" in command.argv("127.0.0.1:1", "t")[-1]
    assert parse_bot_spec("cmd:mybot").kind == "command"
    with pytest.raises(ValueError):
        parse_bot_spec("no/such/dir")


def test_token_file(tmp_path: pytest.TempPathFactory) -> None:
    """Token files take TOKEN [PLAYER] lines with comments."""
    path = tmp_path / "tokens"  # type: ignore[operator]
    path.write_text("# class tokens\nabc alice\ndef   # no player\n")
    assert read_token_file(str(path)) == {"abc": "alice", "def": "player3"}


def test_json_log_lines_always_carry_game_seat_and_ply() -> None:
    """Every JSON log line has game_id, seat and ply, bound or null."""
    stream = io.StringIO()
    referee_logging.configure("json", "INFO", stream=stream)
    log = referee_logging.get_logger("test")
    log.info("plain")
    with structlog.contextvars.bound_contextvars(game_id="g1", seat="RED", ply=3):
        log.info("in_game")
    log.debug("hidden")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    referee_logging.configure("console", "WARNING")
    assert [line["event"] for line in lines] == ["plain", "in_game"]
    assert lines[0]["game_id"] is None and lines[0]["ply"] is None
    assert (lines[1]["game_id"], lines[1]["seat"], lines[1]["ply"]) == ("g1", "RED", 3)


def test_a_record_names_its_ending_once() -> None:
    """A wall-clock game lost on time: its JSON record says so in one tag (``Termination``),
    not also in a second vocabulary (a ``Verdict`` tag saying ``time``)."""
    from engine.adjudication.verdicts import GameEnd
    from engine.records import record_to_json
    from engine.registry import load_game
    from referee.match.clock import ClockMode
    from referee.match.records import build_record
    from referee.match.report import GameReport, SeatReport

    game = load_game("tetress")
    report = GameReport(
        game_id="g1",
        game="tetress",
        params={},
        seat_names=("RED", "BLUE"),
        seats=[SeatReport("a", ""), SeatReport("b", "")],
        time_control=TimeControl(game_time_s=2, clock=ClockMode.WALL),
        memory_limit_bytes=250 << 20,
        initial_position=game.new_state().to_string(),
        started_at="2026-11-29T03:00:00Z",
        end=GameEnd(Verdict.TIME, 0, Verdict.TIME, "BLUE exceeded its wall time", 1),
    )
    tags = record_to_json(build_record(report, game))["tags"]
    assert tags["Termination"] == "time_forfeit" and tags["Clock"] == "wall"
    endings = [k for k, v in tags.items() if v in ("time", "time_forfeit", "TLE")]
    assert endings == ["Termination"], tags


def test_a_game_uid_never_looks_like_a_database_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh uid made only of decimal digits (about 1 in 1,900) is drawn again: a reference
    of digits alone is read as a database id, so such a uid would name no game."""
    import uuid

    from referee.match import report

    drawn = iter([uuid.UUID(hex="2548131180194005" + "0" * 16), uuid.UUID(int=0xA << 124)])
    monkeypatch.setattr(report.uuid, "uuid4", lambda: next(drawn))
    uid = report.new_game_id()
    assert not uid.isdigit() and uid == "a000000000000000"
