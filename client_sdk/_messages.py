"""Reading the referee's messages into the SDK's own types: game facts, clocks, results, and
the sentence for a referee that speaks another protocol version."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client_sdk._agent import GameInfo, GameResult
from client_sdk._think import ThinkParts
from client_sdk._version import PROTOCOL_VERSION
from client_sdk.proto import referee_pb2 as pb
from engine.adjudication.verdicts import Ending, Verdict, parse_ending
from engine.game import Game

#: A move's text (Tetress and ATT moves are under 60 characters); longer is a protocol error.
MAX_ACTION_CHARS = 256


def action_problem(action: str) -> str | None:
    """Why the referee refuses a move's text before parsing it (``None``: it does not)."""
    if len(action) > MAX_ACTION_CHARS:
        return f"sent a move text of {len(action)} characters (at most {MAX_ACTION_CHARS})"
    return None


def game_info_of(game_id: str, info: pb.GameInfo, game: Game[Any]) -> GameInfo:
    """A ``GameStart``'s facts as the agent sees them."""
    tc = info.time_control
    players = [p.name for p in info.players]
    return GameInfo(
        game_id=game_id,
        game=info.game.name,
        seat=info.seat,
        seat_names=(info.seat_names[0], info.seat_names[1])
        if len(info.seat_names) == 2
        else game.seat_names,
        params=dict(info.game.params),
        time_per_game=tc.game_time_s or None,
        move_time=tc.move_time_s or None,
        increment=tc.increment_s,
        memory_limit_mb=info.memory_limit_bytes / 2**20 if info.memory_limit_bytes else None,
        opponent=players[1 - info.seat] if len(players) == 2 else "",
        clock=tc.clock or "wall",
        seed=info.seed if info.HasField("seed") else None,
    )


def result_of(over: pb.GameOver, info: GameInfo) -> GameResult:
    """A ``GameOver`` as the agent's :class:`GameResult`, verdict and termination as enums."""
    verdict = verdict_of(over.verdict)
    return GameResult(
        game_id=over.game_id,
        seat=info.seat,
        winner=over.winner_seat if over.HasField("winner_seat") else None,
        verdict=verdict,
        termination=ending_of(over.termination, verdict),
        reason=over.reason,
        plies=over.plies,
        seat_names=info.seat_names,
    )


def remaining(clocks: Sequence[pb.Clock], seat: int, default: float | None = None) -> float | None:
    """The budget left on ``seat``'s clock (``None``: no budget)."""
    if 0 <= seat < len(clocks):
        clock = clocks[seat]
        return clock.remaining_s if clock.HasField("remaining_s") else None
    return default


def protocol_mismatch(referee_version: int, server: str = "") -> str:
    """The sentence for a referee speaking another protocol version than this SDK."""
    who = f"the referee ({server})" if server else "the referee"
    return (
        f"{who} speaks protocol version {referee_version or 1}, this SDK speaks "
        f"{PROTOCOL_VERSION}: install the SDK version that matches the referee: its web "
        "pages serve it at /sdk (else ask its operator)"
    )


def verdict_of(value: int) -> Verdict:
    """The verdict of a GameOver (an unknown value, from a newer referee, reads as aborted)."""
    try:
        return Verdict(pb.Verdict.Name(value).removeprefix("VERDICT_").lower())  # type: ignore[arg-type]
    except ValueError:
        return Verdict.ABORTED


def ending_of(text: str, verdict: Verdict) -> Ending:
    """A GameOver's termination; a word this SDK does not know reads as the verdict."""
    try:
        return parse_ending(text)
    except ValueError:
        return verdict


def think_message(think: ThinkParts) -> pb.ThinkRecord:
    """A move's think record as the protocol carries it."""
    message = pb.ThinkRecord(pv=list(think.pv), text=think.text)
    if think.depth is not None:
        message.depth = think.depth
    if think.nodes is not None:
        message.nodes = think.nodes
    if think.score is not None:
        message.score = think.score
    return message
