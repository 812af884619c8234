"""Validation plays the upload from every seat: a bug that shows only when moving second is
found (by the first check when it shows in the first moves, else by the full games), and the
rejection names the seat; the deciding game is kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from upload_harness import mine, submit_cli, upload_server, write_tree

from referee.storage.enums import GameKind

pytestmark = pytest.mark.slow

# Plays legally as RED; as BLUE its first move raises.
SECOND_SEAT_BUG = """
import random

from client_sdk import Agent


class Bot(Agent):
    name = "blue-bug"

    def on_game_start(self, info, state):
        self.seat = info.seat

    def choose_move(self, state, clocks):
        if self.seat == 1:
            raise RuntimeError("my BLUE opening book is empty")
        return random.choice(list(state.legal_moves))
"""

# Plays legally as RED; as BLUE from its sixth move on it raises: past the first check.
LATE_SECOND_SEAT_BUG = SECOND_SEAT_BUG.replace(
    "if self.seat == 1:",
    "self.moves = getattr(self, 'moves', 0) + 1\n        if self.seat == 1 and self.moves > 5:",
)


def test_a_bug_only_as_blue_is_rejected_naming_the_seat(tmp_path: Path) -> None:
    """The upload passes its game as RED, fails as BLUE: rejected, and the sentence says it
    was playing BLUE, moving second; both games are kept for its author."""
    write_tree(tmp_path, {"bluebug.py": SECOND_SEAT_BUG})

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            result = await submit_cli(up, "alice", str(tmp_path / "bluebug.py"))
            assert result["status"] == "rejected", result
            assert result["reason"].startswith("playing as BLUE (moving second)"), result
            assert "my BLUE opening book is empty" in result["reason"]
            kept = up.repo.list_games(include_validation=True)
            assert len(kept) == 1 and {g.kind for g in kept} == {GameKind.VALIDATION}
            assert kept[0].plies == 1
            listed = await mine(up, up.tokens["alice"])
            assert [v.playing for v in listed.versions] == [False]

    asyncio.run(main())


def test_a_bug_past_the_first_check_is_rejected_by_the_full_games(tmp_path: Path) -> None:
    """A bug from the sixth move on as BLUE passes the first check (validating, queued) and
    the full games still reject the version, naming BLUE; both full games are kept."""
    write_tree(tmp_path, {"latebug.py": LATE_SECOND_SEAT_BUG})

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            result = await submit_cli(up, "alice", str(tmp_path / "latebug.py"))
            assert result["first_check"] == "passed", result
            assert result["status"] == "rejected", result
            assert result["reason"].startswith("playing as BLUE (moving second)"), result
            kept = up.repo.list_games(include_validation=True)
            assert len(kept) == 2 and max(g.plies for g in kept) > 5
            listed = await mine(up, up.tokens["alice"])
            assert [v.status for v in listed.versions] == ["rejected"]

    asyncio.run(main())
