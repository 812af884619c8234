"""Shared by the tournament tests: bot arguments, and tournaments made in a real database."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.play.bots import resolve_bot
from referee.storage import (
    ForfeitPolicy,
    Repository,
    TournamentFormat,
    TournamentInfo,
    TournamentSettings,
)

ROOT = Path(__file__).resolve().parents[2]
RANDOM = "client_sdk.examples.random_bot"
GREEDY = "client_sdk.examples.greedy_bot"
COURSE_RANDOM = str(ROOT / "client_sdk" / "examples" / "course_random")
COURSE_GREEDY = str(ROOT / "client_sdk" / "examples" / "course_greedy")
FAULTY = Path(__file__).resolve().parent / "bots" / "faulty_bots.py"
ILLEGAL = f"{FAULTY}:IllegalBot"
CRASH = f"{FAULTY}:CrashBot"
PYTHON = sys.executable
#: Short games keep the suite fast; the tournament logic does not care how long a game is.
TURN_LIMIT = 12


def make_tournament(
    repo: Repository,
    name: str,
    fmt: TournamentFormat,
    bots: Sequence[str],
    *,
    turn_limit: int = TURN_LIMIT,
    forfeit: ForfeitPolicy = ForfeitPolicy.LOSS,
    **settings: Any,
) -> TournamentInfo:
    versions = [resolve_bot(repo, b) for b in bots]
    return repo.create_tournament(
        TournamentSettings(
            name=name,
            format=fmt,
            game="tetress",
            game_params={"turn_limit": turn_limit},
            time_control={"per_game": 60.0, "grace": 1.0},
            forfeit_policy=forfeit,
            **settings,
        ),
        [v.id for v in versions],
    )


def unix_address() -> str:
    """A ``unix:`` address in a fresh private folder (launched, sandboxed bots reach a
    tournament server through it)."""
    return f"unix:{tempfile.mkdtemp(prefix='arena-test-')}/referee.sock"
