"""Clock modes: a CPU clock charges the bot's CPU seconds with a wall-clock backstop, a wall clock
charges time at the referee, and a game with an unmeasured seat runs wall clocks for both."""

from __future__ import annotations

import pytest

from engine.adjudication import (
    Accepted,
    Adjudicator,
    ClockMode,
    GameEnd,
    MoveAnswer,
    Spent,
    TimeControl,
    TimedOut,
    Turn,
    Verdict,
)
from engine.registry import load_game


def _judge(control: TimeControl, measured: tuple[bool, bool] = (True, True)) -> Adjudicator:
    return Adjudicator(load_game("tetress"), control=control, cpu_measured=measured)


def _move(judge: Adjudicator) -> str:
    turn = judge.turn()
    assert isinstance(turn, Turn)
    return judge.game.move_to_text(next(iter(judge.state.legal_moves)))


def test_cpu_clock_charges_cpu_seconds_and_keeps_wall_beside_them() -> None:
    """On a CPU clock a move that took 9 s of wall time but 1 s of CPU costs 1 s."""
    judge = _judge(TimeControl(game_time_s=5, clock=ClockMode.CPU))
    decision = judge.judge(0, MoveAnswer(_move(judge), 9.0, cpu=1.0))
    assert isinstance(decision, Accepted)
    assert (decision.elapsed, decision.wall, decision.cpu) == (1.0, 9.0, 1.0)
    assert decision.clock_after_s == pytest.approx(4.0)
    clock = judge.clocks[0]
    assert (clock.used, clock.wall_used, clock.cpu_used) == (1.0, 9.0, 1.0)


def test_wall_clock_charges_wall_seconds_even_when_cpu_is_measured() -> None:
    """On a wall clock the same move costs its 9 s of wall time, and runs out of a 5 s budget."""
    judge = _judge(TimeControl(game_time_s=5, grace_s=0, clock=ClockMode.WALL))
    end = judge.judge(0, MoveAnswer(_move(judge), 9.0, cpu=1.0))
    assert isinstance(end, GameEnd) and end.verdict is Verdict.TIME
    assert end.reason == "RED exceeded its wall time: used 9.00 s of 5.00 s for the game"


def test_an_unmeasured_seat_makes_both_clocks_wall_clocks() -> None:
    """A CPU clock asked for a game with a remote (unmeasured) seat runs as a wall clock."""
    judge = _judge(TimeControl(game_time_s=5, clock=ClockMode.CPU), measured=(True, False))
    assert judge.control.clock is ClockMode.WALL
    decision = judge.judge(0, MoveAnswer(_move(judge), 2.0, cpu=0.5))
    assert isinstance(decision, Accepted) and decision.elapsed == 2.0
    assert _judge(TimeControl(), measured=(True, True)).control.clock is ClockMode.CPU


def test_running_out_of_cpu_time_names_the_cpu_clock() -> None:
    """Over the move limit in CPU seconds: a TLE whose sentence says CPU time."""
    judge = _judge(TimeControl(move_time_s=2, grace_s=0.25))
    end = judge.judge(0, MoveAnswer(_move(judge), 2.4, cpu=2.5))
    assert isinstance(end, GameEnd) and end.verdict is Verdict.TIME and end.offender == 0
    assert end.reason == "RED exceeded its CPU time: used 2.50 s of 2.00 s for ply 1"


def test_a_sleeping_bot_ends_by_the_wall_backstop_with_its_own_sentence() -> None:
    """A bot with CPU time left but no answer by 3x its allowance plus 5 s loses on the backstop."""
    judge = _judge(TimeControl(move_time_s=2, grace_s=0.25))
    turn = judge.turn()
    assert isinstance(turn, Turn)
    assert turn.allowance.backstop == pytest.approx(11.0)
    assert turn.allowance.blown(Spent(10.9, 0.01)) is None
    assert turn.allowance.blown(Spent(11.1, 0.01)) == "backstop"
    end = judge.judge(0, TimedOut(11.1, 0.01))
    assert isinstance(end, GameEnd) and end.verdict is Verdict.TIME
    assert end.reason.startswith("RED ran out of wall time: no answer for ply 1 after 11.10 s")
    assert "backstop of a CPU clock, 11.00 s" in end.reason
    assert "used 0.01 s of 2.00 s CPU time" in end.reason


def test_cpu_clock_wakes_when_its_cpu_could_have_run_out() -> None:
    """A waiting referee looks again when the CPU left could have been used, never after the
    backstop; a wall clock waits for its deadline."""
    cpu = _judge(TimeControl(move_time_s=2, grace_s=0.0))
    allowance = cpu.clocks[0].allowance()
    assert allowance.wake_in(Spent(0.0)) == pytest.approx(2.0)
    assert allowance.wake_in(Spent(3.0, 0.5)) == pytest.approx(1.5)
    assert allowance.wake_in(Spent(10.5, 0.5)) == pytest.approx(0.5)
    wall = _judge(TimeControl(move_time_s=2, grace_s=0.0, clock=ClockMode.WALL))
    assert wall.clocks[0].allowance().wake_in(Spent(0.5, 0.1)) == pytest.approx(1.5)
    assert wall.clocks[0].allowance().backstop is None


def test_time_control_round_trips_through_its_dict() -> None:
    """The JSON form (job payloads, stored settings) reads back as the same settings."""
    control = TimeControl(game_time_s=30, move_time_s=2, clock=ClockMode.WALL)
    assert TimeControl.from_dict(control.as_dict()) == control
    assert TimeControl.from_dict({"game_time_s": 10}).clock is ClockMode.CPU
    with pytest.raises(ValueError):
        TimeControl.from_dict({"clock": "sundial"})
