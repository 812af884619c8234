"""``python -m client_sdk mine failures`` for a C++ or JavaScript bot (a command bot): the
reproduce command it prints replays the pack against a command (``-- YOUR_BOT_COMMAND``), as the
game page does, and a Python bot's keeps the ``BOT`` form."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from upload_harness import cli, upload_server

from engine.adjudication.verdicts import Verdict
from referee.storage import FinishedGame, Repository, SeatResult, SourceKind

pytestmark = pytest.mark.slow


def _faulted(repo: Repository, faulty: int, other: int) -> str:
    """A stored game that the version ``faulty`` (RED) lost by a crash; its id."""
    now = datetime.now(UTC)
    stored = repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(faulty), SeatResult(other)],
            verdict=Verdict.RUNTIME_ERROR,
            winner_seat=1,
            offender_seat=0,
            plies=3,
            started_at=now,
            finished_at=now,
            reason="RED's bot crashed (killed by signal SIGSEGV)",
        )
    )
    return stored.uid


def test_a_command_bots_failure_is_reproduced_against_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's C++ upload (a command version) and her Python bot each lost by a fault: `mine
    failures` prints `reproduce ID --server ... -- YOUR_BOT_COMMAND` for the first and
    `reproduce ID BOT --server ...` for the second; `mine --json` marks only the first."""
    monkeypatch.setenv("TETROMINO_STATE_DIR", str(tmp_path / "state"))

    async def main() -> tuple[str, str, str, str]:
        async with upload_server(tmp_path, players=("alice", "bob")) as up:
            repo = up.repo
            cee = repo.add_bot_version(
                "cee", "v1", source_kind=SourceKind.COMMAND, location="/b/bot", owner="alice"
            )
            pie = repo.add_bot_version(
                "pie", "v1", source_kind=SourceKind.SDK_MODULE, location="pie", owner="alice"
            )
            theirs = repo.add_bot_version(
                "theirs", "v1", source_kind=SourceKind.SDK_MODULE, location="t", owner="bob"
            )
            compiled, python = _faulted(repo, cee.id, theirs.id), _faulted(repo, pie.id, theirs.id)
            login = ("--server", up.address, "--token", up.tokens["alice"])
            code, out, err = await cli("mine", "failures", *login)
            assert code == 0, err
            code, raw, err = await cli("mine", "games", "--json", *login)
            assert code == 0, err
            return compiled, python, out, raw

    compiled, python, out, raw = asyncio.run(main())
    lines = [line.strip() for line in out.splitlines() if "client_sdk reproduce" in line]
    by_game = {line.split()[4]: line for line in lines}
    assert by_game[compiled].startswith(f"python -m client_sdk reproduce {compiled} --server ")
    assert by_game[compiled].endswith(" --token YOUR_TOKEN -- YOUR_BOT_COMMAND"), out
    assert by_game[python].startswith(f"python -m client_sdk reproduce {python} BOT --server ")
    assert "YOUR_BOT_COMMAND" not in by_game[python], out
    assert raw.count('"my_command": true') == 1, raw
