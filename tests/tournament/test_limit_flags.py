"""The course referee's ``-t``/``-s`` work on every command that takes limits, not only on
``referee match``."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.commands.main import build_parser, main
from referee.storage import Repository


@pytest.mark.parametrize(
    "argv",
    [
        ["match", "a", "b"],
        ["tournament", "quick"],
        ["tournament", "create", "t", "a", "b"],
        ["sprt", "a", "b"],
        ["serve"],
    ],
)
def test_every_limit_command_reads_t_and_s(argv: list[str]) -> None:
    """``-t 7 -s 123`` set the game clock and the memory limit wherever limits are taken."""
    args = build_parser().parse_args([*argv, "-t", "7", "-s", "123"])
    assert (args.time, args.memory) == (7.0, 123.0)


@pytest.mark.slow
def test_tournament_create_stores_t_and_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tournament create ... -t 7 -s 123`` stores a 7 s clock and a 123 MB limit, and
    ``tournament show`` says so."""
    db = str(tmp_path / "arena.db")
    repo = Repository.open(db)
    repo.create_player("alice")
    for name in ("one", "two"):
        repo.add_bot_version(name, "1", source_kind="remote", location=name, owner="alice")
    repo.close()
    create = ["tournament", "create", "t", "one", "two", "-t", "7", "-s", "123", "--db", db]
    assert main(create) == 0
    assert main(["tournament", "show", "t", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "clock 7 s/game" in out and "memory 123 MB" in out
