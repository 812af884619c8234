"""The adjudicator: every referee decision about one game, judged without any I/O."""

from __future__ import annotations

import pytest

from engine.adjudication import (
    Accepted,
    Adjudicator,
    BotFailed,
    Disconnected,
    GameEnd,
    Measured,
    MoveAnswer,
    NotAMove,
    ProtocolViolation,
    Strike,
    TimeControl,
    TimedOut,
    Turn,
    Verdict,
    parse_ending,
)
from engine.outcome import Outcome, Termination, points, result_text
from engine.registry import load_game


def _judge(**kwargs: object) -> Adjudicator:
    return Adjudicator(load_game("tetress"), **kwargs)  # type: ignore[arg-type]


def _first_move(judge: Adjudicator) -> str:
    return judge.game.move_to_text(next(iter(judge.state.legal_moves)))


def _turn(judge: Adjudicator) -> Turn:
    turn = judge.turn()
    assert isinstance(turn, Turn)
    return turn


def test_a_legal_move_is_accepted_charged_and_applied() -> None:
    """A legal move comes back canonical, charged to the mover's clock, and the turn passes."""
    judge = _judge(control=TimeControl(game_time_s=10, increment_s=1))
    turn = _turn(judge)
    assert (turn.seat, turn.ply) == (0, 0)
    decision = judge.judge(0, MoveAnswer(_first_move(judge), 2.0))
    assert isinstance(decision, Accepted)
    assert decision.clock_after_s == pytest.approx(9.0)
    assert judge.moves == [decision.text] and judge.state.ply == 1
    assert _turn(judge).seat == 1


def test_time_sentences_say_which_limit_was_broken() -> None:
    """Over the move limit names the move; over the budget names the game; both lose on time."""
    per_move = _judge(control=TimeControl(game_time_s=100, move_time_s=2, grace_s=0))
    _turn(per_move)
    end = per_move.judge(0, MoveAnswer(_first_move(per_move), 2.5))
    assert isinstance(end, GameEnd)
    assert (end.verdict, end.termination, end.offender, end.winner) == (
        Verdict.TIME,
        Verdict.TIME,
        0,
        1,
    )
    assert end.reason == "RED exceeded its wall time: used 2.50 s of 2.00 s for ply 1"
    budget = _judge(control=TimeControl(game_time_s=1, grace_s=0.25))
    _turn(budget)
    end = budget.judge(0, TimedOut(1.3))
    assert isinstance(end, GameEnd)
    assert end.reason == "RED exceeded its wall time: used 1.30 s of 1.00 s for the game"


def test_bad_moves_are_illegal_with_their_sentence() -> None:
    """An occupied cell, unreadable text and a non-move each lose as an illegal move."""
    judge = _judge()
    _turn(judge)
    end = judge.judge(0, MoveAnswer("PLACE(", 0.1))
    assert isinstance(end, GameEnd) and end.verdict is Verdict.ILLEGAL_MOVE
    assert end.reason.startswith("RED sent a move that cannot be read 'PLACE('")
    judge = _judge()
    _turn(judge)
    end = judge.judge(0, NotAMove("None", "PlaceAction", 0.1))
    assert isinstance(end, GameEnd)
    assert end.reason == "RED returned None, which is not a PlaceAction"
    judge = _judge()
    _turn(judge)
    first = _first_move(judge)
    assert isinstance(judge.judge(0, MoveAnswer(first, 0.1)), Accepted)
    _turn(judge)
    end = judge.judge(1, MoveAnswer(first, 0.1))
    assert isinstance(end, GameEnd) and end.offender == 1
    assert end.reason.startswith(f"BLUE played an illegal move {first}: ")


def test_self_reported_memory_is_judged_only_where_asked() -> None:
    """A reported peak over the limit is an MLE, unless a launcher measures that seat."""
    limit = 100 * 1024 * 1024
    judged = _judge(memory_limit_bytes=limit)
    _turn(judged)
    end = judged.judge(0, MoveAnswer(_first_move(judged), 0.1, peak_rss_bytes=2 * limit))
    assert isinstance(end, GameEnd) and end.verdict is Verdict.MEMORY
    assert end.reason == "RED exceeded its memory: peak 200.0 MB of 100 MB (self-reported)"
    measured = _judge(memory_limit_bytes=limit, judged_memory=(False, False))
    _turn(measured)
    move = MoveAnswer(_first_move(measured), 0.1, peak_rss_bytes=2 * limit)
    assert isinstance(measured.judge(0, move), Accepted)


@pytest.mark.parametrize(
    ("answer", "verdict", "reason"),
    [
        (BotFailed("Traceback...\nValueError: x"), Verdict.RUNTIME_ERROR, "BLUE's bot failed: "),
        (ProtocolViolation("sent a second Hello"), Verdict.PROTOCOL_ERROR, "BLUE sent a second"),
        (Disconnected("gone", 10.0), Verdict.DISCONNECT, "BLUE disconnected (gone) and did not"),
        (Measured(Verdict.MEMORY, "BLUE exceeded"), Verdict.MEMORY, "BLUE exceeded"),
    ],
)
def test_faults_outside_a_move_end_the_game(answer: object, verdict: Verdict, reason: str) -> None:
    """A crash report, a protocol violation, a closed window and a measured fault each make
    the offender lose, with the verdict as the termination."""
    judge = _judge()
    _turn(judge)
    end = judge.judge(1, answer)  # type: ignore[arg-type]
    assert isinstance(end, GameEnd)
    assert (end.verdict, end.termination, end.offender, end.winner) == (verdict, verdict, 1, 0)
    assert end.reason.startswith(reason)


def test_stray_moves_get_strikes_then_a_protocol_error() -> None:
    """Out-of-turn moves are refused with a message until the strike limit ends the game."""
    judge = _judge(max_strikes=2)
    _turn(judge)
    first = judge.stray(1, 0)
    assert isinstance(first, Strike) and "not your turn" in first.message
    wrong_ply = judge.stray(0, 5)
    assert isinstance(wrong_ply, Strike)
    assert wrong_ply.message == "move for ply 5 but ply 0 was requested"
    assert isinstance(judge.stray(1, 0), Strike)
    end = judge.stray(1, 0)
    assert isinstance(end, GameEnd) and end.verdict is Verdict.PROTOCOL_ERROR
    assert end.reason == "BLUE sent too many out-of-turn or stale moves"


def test_rules_end_keeps_the_termination_an_enum() -> None:
    """A game over under the rules ends with the engine's Termination, not a string."""
    judge = _judge()
    while not isinstance(turn := judge.turn(), GameEnd):
        move = next(iter(judge.state.legal_moves))
        assert isinstance(
            judge.judge(turn.seat, MoveAnswer(judge.game.move_to_text(move), 0)), Accepted
        )
    assert isinstance(turn.termination, Termination)
    assert turn.verdict in (Verdict.NORMAL, Verdict.TURN_LIMIT)
    assert parse_ending(str(turn.termination)) is turn.termination
    assert parse_ending("time") is Verdict.TIME


def test_one_place_turns_a_winner_into_result_text_and_points() -> None:
    """Result text and points agree for outcomes, game ends and stopped games."""
    assert [result_text(w) for w in (0, 1, None)] == ["1-0", "0-1", "1/2-1/2"]
    assert result_text(0, aborted=True) == "*"
    assert [points(0, w) for w in (0, 1, None)] == [1.0, 0.0, 0.5]
    assert points(1, None, aborted=True) == 0.0
    outcome = Outcome(Termination.NO_LEGAL_MOVE, 1)
    assert (outcome.result(), outcome.score(1)) == ("0-1", 1.0)


def test_an_ended_game_stays_ended_whatever_comes_after() -> None:
    """Once the rules end the game, a disconnect, a crash or a stray move from either seat gets
    the same end back: the result is fixed the moment the game ended."""
    judge = Adjudicator(load_game("tetress", turn_limit=2))
    for _ in range(2):
        turn = _turn(judge)
        assert isinstance(judge.judge(turn.seat, MoveAnswer(_first_move(judge), 0.01)), Accepted)
    end = judge.turn()
    assert isinstance(end, GameEnd) and end.verdict is Verdict.TURN_LIMIT
    assert judge.end is end
    assert judge.judge(1, Disconnected("the bot closed its stream")) is end
    assert judge.judge(0, BotFailed("boom")) is end
    assert judge.stray(1, 7) is end
    assert judge.turn() is end
