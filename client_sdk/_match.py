"""One local game between two bot processes, judged by the server's own
:class:`~engine.adjudication.Adjudicator` (``python -m client_sdk play``; the CLI is
:mod:`client_sdk._play`, the processes :mod:`client_sdk._procbot`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from client_sdk._agent import GameInfo, GameResult
from client_sdk._local import turn_clocks
from client_sdk._procbot import ProcessBot
from engine.adjudication import (
    Accepted,
    Adjudicator,
    GameEnd,
    MoveAnswer,
    NotAMove,
    TimeControl,
)
from engine.adjudication.verdicts import RECORD_WORDS, ply_number
from engine.records import RecordBuilder
from engine.records.model import GameRecord
from engine.records.search import SearchInfo
from engine.registry import load_game
from engine.render.text import render_text

_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """The referee's limits for a local game: its clocks and the memory per bot (0: none)."""

    control: TimeControl
    memory_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Opening:
    """Book moves (long form) played for both seats before the first request, and its tags."""

    moves: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()


@dataclass
class LocalMatch:
    """One finished game: the end, its record, and who sat where."""

    game_id: str
    names: tuple[str, str]
    end: GameEnd
    seat_names: tuple[str, str]
    plies: int
    record: GameRecord
    time_used: tuple[float, float]
    peak_mb: tuple[float, float] = field(default=(0.0, 0.0))


def _tags(game_id: str, limits: Limits) -> tuple[tuple[str, str], ...]:
    """The record's own tags, as the referee writes them: the game's id, the memory limit."""
    return (("GameId", game_id), ("MemoryLimitMB", f"{limits.memory_bytes / _MB:g}"))


def play_one(
    bots: Sequence[ProcessBot],
    names: tuple[str, str],
    *,
    game: str,
    params: dict[str, int],
    limits: Limits,
    opening: Opening,
    game_id: str,
    show: Callable[[str], None] | None = None,
) -> LocalMatch:
    """Play ``bots`` (seat order) once; every decision is the adjudicator's. ``show`` gets
    the board and the clocks after each move (``-v``)."""
    rules = load_game(game, **params)
    judge = Adjudicator(
        rules,
        control=limits.control,
        memory_limit_bytes=limits.memory_bytes,
        # The processes are measured from outside; their own reports are only recorded.
        judged_memory=(False, False),
    )
    builder = RecordBuilder(
        rules,
        players=names,
        event="local game",
        site="python -m client_sdk play",
        date=datetime.now(UTC).strftime("%Y.%m.%d"),
        # The clock the judge charges (no CPU is measured here: a wall clock), not the one
        # asked for.
        time_control=judge.control.describe(),
        extra_tags=(*_tags(game_id, limits), *opening.labels),
    )
    for accepted in judge.play_book(opening.moves):
        builder.add(accepted.move, comment="book")
    position = judge.state.to_string()
    for seat, bot in enumerate(bots):
        bot.start(_info(rules.name, params, seat, judge, limits, game_id, names), position)
    end = _loop(judge, bots, builder, limits, show)
    position = judge.state.to_string()
    for seat, bot in enumerate(bots):
        bot.finish(_result(game_id, seat, end, judge), position)
    record = builder.finish(
        result=end.result(),
        termination=RECORD_WORDS.get(end.verdict),
        reason=end.reason,
    )
    return LocalMatch(
        game_id,
        names,
        end,
        judge.seat_names,
        len(judge.moves),
        record,
        (judge.clocks[0].used, judge.clocks[1].used),
        (bots[0].peak_rss / _MB, bots[1].peak_rss / _MB),
    )


def _loop(
    judge: Adjudicator,
    bots: Sequence[ProcessBot],
    builder: RecordBuilder,
    limits: Limits,
    show: Callable[[str], None] | None,
) -> GameEnd:
    while True:
        turn = judge.turn()
        if isinstance(turn, GameEnd):
            return turn
        bot = bots[turn.seat]
        name = judge.seat_names[turn.seat]
        answer = bot.request(
            name,
            turn_clocks(judge, turn),
            judge.state.to_string(),
            turn.allowance.deadline,
            limits.memory_bytes,
        )
        decision = judge.judge(turn.seat, answer)
        if isinstance(decision, GameEnd):
            return decision
        assert isinstance(answer, MoveAnswer | NotAMove)
        _record(builder, decision, answer, bot.last_think, bot.last_search)
        if show is not None:
            show(_picture(judge, decision))
        if judge.state.outcome() is None:
            # As the referee does: both bots hear of every accepted move, in the mover's words.
            spoken = answer.text if isinstance(answer, MoveAnswer) else decision.text
            for other in bots:
                other.accepted(turn.seat, spoken)


def _record(
    builder: RecordBuilder,
    move: Accepted,
    answer: MoveAnswer | NotAMove,
    think: float,
    search: SearchInfo | None,
) -> None:
    builder.add(
        move.move,
        think=round(think, 4),
        lag=round(max(0.0, move.elapsed - think), 4),
        clock=None if move.clock_after_s is None else round(move.clock_after_s, 3),
        mem=round(answer.peak_rss_bytes / _MB, 1) if answer.peak_rss_bytes else None,
        extra=(("time", f"{move.elapsed:.4f}"),),
        search=search,
    )


def _picture(judge: Adjudicator, move: Accepted) -> str:
    names = judge.seat_names
    clocks = "  ".join(f"{names[s]} {_seconds(judge.clocks[s].remaining)}" for s in (0, 1))
    head = f"ply {ply_number(move.ply)}: {names[move.seat]} {move.text} ({move.elapsed:.3f} s)"
    return f"{head}\n{render_text(judge.state, color=sys.stdout.isatty())}\nclocks: {clocks}\n"


def _seconds(value: float | None) -> str:
    return "no limit" if value is None else f"{value:.2f} s left"


def _info(
    game: str,
    params: dict[str, int],
    seat: int,
    judge: Adjudicator,
    limits: Limits,
    game_id: str,
    names: tuple[str, str],
) -> GameInfo:
    control = limits.control
    return GameInfo(
        game_id=game_id,
        game=game,
        seat=seat,
        seat_names=judge.seat_names,
        params=dict(params),
        time_per_game=control.game_time_s or None,
        move_time=control.move_time_s or None,
        memory_limit_mb=limits.memory_bytes / _MB if limits.memory_bytes else None,
        opponent=names[1 - seat],
    )


def _result(game_id: str, seat: int, end: GameEnd, judge: Adjudicator) -> GameResult:
    return GameResult(
        game_id,
        seat,
        end.winner,
        end.verdict,
        end.termination,
        end.reason,
        len(judge.moves),
        judge.seat_names,
    )


def as_dict(game: LocalMatch) -> dict[str, Any]:
    """One game for ``--json``: the same keys as ``referee match --json`` where they apply."""
    end = game.end
    return {
        "game_id": game.game_id,
        "result": end.result(),
        "winner": end.winner_name(game.seat_names),
        "verdict": str(end.verdict),
        "termination": str(end.termination),
        "reason": end.reason,
        "plies": game.plies,
        "seats": {
            game.seat_names[s]: {
                "bot": game.names[s],
                "time_used_s": round(game.time_used[s], 3),
                "peak_memory_mb": round(game.peak_mb[s], 1),
            }
            for s in (0, 1)
        },
    }
