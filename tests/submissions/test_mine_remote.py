"""``python -m client_sdk mine`` for a student who plays remotely: their seat is named as the
game names it (RED/BLUE), and ``mine output`` says that a remote bot's output is not kept."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from upload_harness import cli, upload_server

from engine.adjudication.verdicts import Verdict
from engine.records import RecordBuilder, write_record
from engine.registry import load_game
from referee.storage import FinishedGame, SeatResult, SourceKind

pytestmark = pytest.mark.slow


def _record() -> str:
    game = load_game("tetress")
    builder = RecordBuilder(game, players=("bob/their_bot@1", "alice/my_bot@1"))
    state = game.new_state()
    for _ in range(2):
        legal = sorted(state.legal_moves, key=str)
        builder.add(legal[len(legal) // 2])
        state.apply(legal[len(legal) // 2])
    return write_record(builder.finish(result="*"))


def test_mine_names_the_seat_and_says_remote_output_is_not_kept(tmp_path: Path) -> None:
    """alice's remote bot played BLUE: ``mine games`` says ``you: BLUE``; ``mine output``
    says its output stayed on her machine instead of printing an empty body."""

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice", "bob")) as up:
            repo = up.repo
            theirs = repo.add_bot_version(
                "bob/their_bot", "1", source_kind=SourceKind.REMOTE, location="x", owner="bob"
            )
            mine = repo.add_bot_version(
                "alice/my_bot", "1", source_kind=SourceKind.REMOTE, location="my_bot", owner="alice"
            )
            now = datetime.now(UTC)
            stored = repo.record_game(
                FinishedGame(
                    game="tetress",
                    seats=[SeatResult(theirs.id), SeatResult(mine.id)],
                    verdict=Verdict.NORMAL,
                    winner_seat=1,
                    plies=2,
                    started_at=now,
                    finished_at=now,
                    reason="RED has no legal move; BLUE wins",
                    record_text=_record(),
                )
            )
            login = ("--server", up.address, "--token", up.tokens["alice"])
            code, out, err = await cli("mine", "games", *login)
            assert code == 0, err
            line = next(x for x in out.splitlines() if stored.uid in x)
            assert line.rstrip().endswith("you: BLUE"), out
            code, out, err = await cli("mine", "output", stored.uid, *login)
            assert code == 0, err
            assert f"game {stored.uid}, BLUE (alice/my_bot@1):" in out
            assert "output" in out and "not kept" in out, out

    asyncio.run(main())
