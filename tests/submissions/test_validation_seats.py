"""Validation plays the upload from every seat: a bug that shows only when moving second is
found, and the rejection names the seat; a good bot's two validation games are both kept."""

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
            assert len(kept) == 2 and {g.kind for g in kept} == {GameKind.VALIDATION}
            listed = await mine(up, up.tokens["alice"])
            assert [v.playing for v in listed.versions] == [False]

    asyncio.run(main())
