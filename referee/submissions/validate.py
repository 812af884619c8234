"""Validation, as Kaggle does it: a new version plays one game against a reference bot.

The game goes through the normal launch path (:func:`referee.play.local.play_match`), so the
submitted code runs in the same sandbox and under the same clocks and memory limit as in a
tournament. The version is accepted only if that game ends without a fault of its own (losing
is fine). Before any game, the code's imports are checked: anything outside the standard
library, NumPy and the SDK is refused with a sentence naming the import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.game import Game
from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.match.report import GameReport
from referee.match.verdicts import Verdict
from referee.play.local import play_match
from referee.sandbox.isolation import choose, require_trusted
from referee.sandbox.launch import DEFAULT_MEMORY_MB, BotSpec
from referee.submissions.errors import LayoutError
from referee.submissions.layout import foreign_imports

#: The reference opponent: quick, never faults, plays every game.
REFERENCE_BOT = "client_sdk.examples.random_bot"
_MISSING = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
#: How much of the bot's captured output is kept with the verdict.
OUTPUT_KEEP = 16 * 1024


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
    #: The validation game as played (kept as a private game record), when one was played.
    report: GameReport | None = None
    game: Game[Any] | None = None
    #: Both seats' captured output (the submitted bot's, then the reference bot's).
    outputs: tuple[str, ...] = ()


def check_imports(root: Path) -> ValidationResult | None:
    """A rejection naming the first import a bot may not use (or a syntax error), else None."""
    try:
        foreign = foreign_imports(root)
    except LayoutError as exc:
        return ValidationResult(False, str(exc))
    if foreign:
        return ValidationResult(False, foreign[0].sentence())
    return None


async def play_validation(target: str, settings: ValidationSettings) -> ValidationResult:
    """Play the validation game of the bot at ``target`` (a BOT argument) in the sandbox."""
    game = load_game(settings.game, **settings.game_params)
    isolation = choose(settings.no_sandbox)
    # An upload is never trusted: without the sandbox it is not run unless the operator said so.
    require_trusted(isolation, False, "an uploaded bot", settings.no_sandbox)
    result = await play_match(
        [BotSpec("sdk", target), BotSpec("sdk", settings.reference)],
        game,
        time_control=settings.time_control,
        memory_mb=settings.memory_mb,
        connect_timeout=settings.connect_timeout_s,
        isolation=isolation,
    )
    report = result.report
    end = report.end
    assert end is not None
    output = result.output(0)[-OUTPUT_KEEP:]
    measured = result.bots[0].measurement if result.bots else ""
    sandbox = f"{isolation.value}; {measured}" if measured else isolation.value
    outputs = (result.output(0), result.output(1))

    def verdict(accepted: bool, reason: str) -> ValidationResult:
        return ValidationResult(
            accepted, reason, output, report.game_id, sandbox, report, game, outputs
        )

    if end.offender == 0 or (end.verdict is Verdict.ABORTED and end.offender is None):
        return verdict(False, _explain(end.reason, output))
    if end.offender == 1:
        # The reference bot failed: not the student's fault, but nothing was shown either.
        return verdict(
            False, f"the validation game could not be completed ({end.reason}); upload again"
        )
    how = f"{end.result()} after {report.plies} moves: {end.reason}"
    return verdict(True, f"the validation game ended without a fault ({how})")


def _explain(reason: str, output: str) -> str:
    """The fault's sentence, naming a missing module when that is what went wrong."""
    missing = _MISSING.search(output)
    if missing:
        return (
            f"your bot failed to import {missing.group(1)!r}, which is not available: bots may "
            "import only the standard library, NumPy and the SDK, plus their own packages "
            f"({reason})"
        )
    return f"the validation game ended with a fault: {reason}"
