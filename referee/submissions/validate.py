"""Validation, as Kaggle does it: a new version plays a reference bot, once from each seat.

The games go through the normal launch path (:func:`referee.play.local.play_match`), so the
submitted code runs in the same sandbox and under the same clocks and memory limit as in a
tournament. A bug that shows only when moving second is found too: the version is accepted
only if every game ends without a fault of its own (losing is fine), and a rejection names the
seat it played. Before any game, the code's imports are checked: anything outside the standard
library, NumPy and the SDK is refused with a sentence naming the import.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.adjudication.verdicts import Verdict
from engine.game import Game
from engine.registry import load_game
from referee.match.clock import SeatClock, TimeControl
from referee.match.report import GameReport, MoveLog
from referee.play.local import play_match
from referee.sandbox.isolation import Isolation, choose, require_trusted
from referee.sandbox.launch import DEFAULT_MEMORY_MB, BotSpec
from referee.submissions.errors import LayoutError
from referee.submissions.layout import foreign_imports, own_modules
from referee.telemetry.logs import get_logger

log = get_logger("referee.submissions.validate")

#: The reference opponent: quick, never faults, plays every game.
REFERENCE_BOT = "client_sdk.examples.random_bot"
_MISSING = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
#: How much of the bot's captured output is kept with the verdict.
OUTPUT_KEEP = 16 * 1024
#: The first check: the upload's moves from the opening, per seat, before it is stopped.
FIRST_CHECK_MOVES = 3


@dataclass(frozen=True, slots=True)
class ValidationSettings:
    """How a new version is tested (server settings, documented in docs/submissions.md)."""

    game: str = "tetress"
    game_params: dict[str, int] = field(default_factory=dict)
    time_control: TimeControl = field(default_factory=TimeControl)
    memory_mb: float | None = DEFAULT_MEMORY_MB
    reference: str = REFERENCE_BOT
    connect_timeout_s: float = 30.0
    #: ``referee serve --no-sandbox``: validate uploads uncontained where the sandbox cannot run.
    no_sandbox: bool = False


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """The outcome of a validation: accepted or not, the sentence and the bot's output."""

    accepted: bool
    reason: str
    output: str = ""
    game_uid: str | None = None
    sandbox: str = ""
    #: The deciding validation game as played (the failed one, else the last), when one was.
    report: GameReport | None = None
    game: Game[Any] | None = None
    #: Both seats' captured output of that game, in seat order.
    outputs: tuple[str, ...] = ()
    #: Every validation game played (kept as private game records), in the order played.
    games: tuple[ValidationGame, ...] = ()


@dataclass(frozen=True, slots=True)
class ValidationGame:
    """One validation game: the ``seat`` the upload played, its report and both outputs."""

    seat: int
    report: GameReport
    outputs: tuple[str, ...]


def check_imports(root: Path) -> ValidationResult | None:
    """A rejection naming the first import a bot may not use (or a syntax error), else None."""
    try:
        foreign = foreign_imports(root)
    except LayoutError as exc:
        return ValidationResult(False, str(exc))
    if foreign:
        return ValidationResult(False, foreign[0].sentence())
    return None


async def play_validation(target: BotSpec, settings: ValidationSettings) -> ValidationResult:
    """Play the validation games of the bot ``target`` (an SDK target or, for a built upload,
    its command) in the sandbox: one from each seat, stopping at the first that rejects it."""
    game = load_game(settings.game, **settings.game_params)
    isolation = choose(settings.no_sandbox)
    # An upload is never trusted: without the sandbox it is not run unless the operator said so.
    require_trusted(isolation, False, "an uploaded bot", settings.no_sandbox)
    played: list[ValidationGame] = []
    verdicts: list[str] = []
    result: ValidationResult | None = None
    for seat in range(len(game.seat_names)):
        result = await _play_seat(target, settings, game, isolation, seat, played)
        if not result.accepted:
            return result
        verdicts.append(result.reason)
    assert result is not None
    summary = "; ".join(verdicts)
    return replace(result, reason=f"every validation game ended without a fault ({summary})")


async def first_check(
    target: BotSpec, settings: ValidationSettings, moves: int = FIRST_CHECK_MOVES
) -> ValidationResult:
    """The first check, in seconds: the bot ``target`` loads and answers its first
    ``moves`` moves from the opening legally within the limits, as each seat (both games at
    once, stopped there); the verdict of the first seat that failed, else a pass."""
    game = load_game(settings.game, **settings.game_params)
    isolation = choose(settings.no_sandbox)
    require_trusted(isolation, False, "an uploaded bot", settings.no_sandbox)
    seats = range(len(game.seat_names))
    played: list[list[ValidationGame]] = [[] for _ in seats]
    results = await asyncio.gather(
        *(_play_seat(target, settings, game, isolation, s, played[s], moves) for s in seats)
    )
    for result in results:
        if not result.accepted:
            return result
    summary = "; ".join(r.reason for r in results)
    return replace(results[-1], reason=f"first check passed ({summary})", report=None)


class _StopAfter:
    """Asks the game to stop once ``seat`` has made ``moves`` moves (the first check), noting
    when the game's first move came and when the last asked for did (for the log)."""

    def __init__(self, seat: int, moves: int) -> None:
        self.seat = seat
        self.left = moves
        self.reached = asyncio.Event()
        self.first_move_at: float | None = None
        self.reached_at: float | None = None

    def on_move(self, state: Any, move: MoveLog, clocks: Sequence[SeatClock]) -> None:
        if self.first_move_at is None:
            self.first_move_at = time.monotonic()
        if move.seat == self.seat and self.left > 0:
            self.left -= 1
            if self.left <= 0:
                self.reached_at = time.monotonic()
                self.reached.set()

    def on_end(self, state: Any, report: GameReport) -> None:
        pass


async def _play_seat(
    target: BotSpec,
    settings: ValidationSettings,
    game: Game[Any],
    isolation: Isolation,
    seat: int,
    played: list[ValidationGame],
    moves: int | None = None,
) -> ValidationResult:
    """One validation game with the upload in ``seat`` (stopped after its first ``moves``
    moves when given); its verdict names the seat."""
    specs = [BotSpec("sdk", settings.reference)] * 2
    specs[seat] = target
    stop = _StopAfter(seat, moves) if moves else None
    began = time.monotonic()
    result = await play_match(
        specs,
        game,
        time_control=settings.time_control,
        memory_mb=settings.memory_mb,
        connect_timeout=settings.connect_timeout_s,
        isolation=isolation,
        observer=stop,
        shutdown=stop.reached if stop else None,
        shutdown_grace=0.0,
    )
    report = result.report
    end = report.end
    assert end is not None
    if stop is not None:
        _log_phases(stop, began, report)
    outputs = (result.output(0), result.output(1))
    played.append(ValidationGame(seat, report, outputs))
    output = outputs[seat][-OUTPUT_KEEP:]
    measured = result.bots[seat].measurement if len(result.bots) > seat else ""
    sandbox = f"{isolation.value}; {measured}" if measured else isolation.value
    order = ("first", "second")[seat] if seat < 2 else f"in turn {seat + 1}"
    where = f"as {game.seat_names[seat]} (moving {order})"

    def verdict(accepted: bool, reason: str) -> ValidationResult:
        return ValidationResult(
            accepted, reason, output, report.game_id, sandbox, report, game, outputs, tuple(played)
        )

    if stop is not None and stop.reached.is_set() and end.offender is None:
        return verdict(True, f"{where}: its first {moves} moves legal and in time")
    if end.offender == seat or (end.verdict is Verdict.ABORTED and end.offender is None):
        return verdict(
            False, f"playing {where}, " + _explain(end.reason, output, _upload_root(target.value))
        )
    if end.offender is not None:
        # The reference bot failed: not the student's fault, but nothing was shown either.
        return verdict(
            False,
            f"the validation game {where} could not be completed ({end.reason}); upload again",
        )
    how = f"{where}: {end.result()} after {report.plies} moves, {end.reason}"
    return verdict(True, how)


def _log_phases(stop: _StopAfter, began: float, report: GameReport) -> None:
    """Where a first check's game spent its time: until the first move (launches, the
    interpreters' start, the sessions), the moves asked for, and the stop after them."""
    now = time.monotonic()
    first = stop.first_move_at
    reached = stop.reached_at
    log.info(
        "first_check_game",
        seat=stop.seat,
        to_first_move_s=None if first is None else round(first - began, 3),
        moves_s=None if first is None or reached is None else round(reached - first, 3),
        stop_s=None if reached is None else round(now - reached, 3),
        total_s=round(now - began, 3),
        stall_s=round(sum(m.stall_s for m in report.moves), 3),
    )


def _upload_root(target: str) -> Path:
    """The unpacked upload's top folder (the bot's entry lies in it)."""
    return Path(target.rsplit(":", 1)[0] if target.count(":") else target).parent


def _explain(reason: str, output: str, root: Path) -> str:
    """The fault's sentence, naming a missing module when that is what went wrong: one the
    upload holds (then the server failed to give it to the bot, not the student) or not."""
    missing = _MISSING.search(output)
    if not missing:
        return f"the validation game ended with a fault: {reason}"
    module = missing.group(1)
    top = module.split(".", 1)[0]
    if top in own_modules(root):
        if module != top:
            return f"your bot imports {module!r}, which your upload's {top} lacks ({reason})"
        return (
            f"your bot's own {top!r} was uploaded but could not be imported in the sandbox: "
            f"a fault of the server, not of your bot; tell the instructor ({reason})"
        )
    return (
        f"your bot failed to import {module!r}, which is neither in your upload nor available "
        "on the server (the standard library, NumPy and the SDK); if it is your own code, "
        f"upload it beside your bot (--helper {top}) ({reason})"
    )
