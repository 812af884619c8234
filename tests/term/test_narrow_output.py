"""What the CLI prints at 80 columns: ``referee games`` keeps bot names told apart (a column
holding one value in every row is said once under the table, a name is cut in its middle),
``doctor`` folds its findings and fixes instead of cutting them and says "skipped" for a check
it did not make, and piped output follows ``$COLUMNS`` when it is set."""

from __future__ import annotations

from pathlib import Path

import pytest
from termgames import store_game

from referee.commands.doctor import _table
from referee.commands.main import main
from referee.doctor import Check, Context, Status
from referee.doctor.checks import CHECKS
from referee.storage import Repository, SourceKind

BOTS = ("course_greedy", "course_random")


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]


def _games_db(tmp_path: Path, names: tuple[str, ...] = BOTS) -> str:
    db = str(tmp_path / "arena.db")
    repo = Repository.open(db)
    ids = [
        repo.add_bot_version(n, "1", source_kind=SourceKind.COMMAND, location=f"./{n}").id
        for n in names
    ]
    store_game(repo, ids[0], ids[1], 0)
    store_game(repo, ids[1], ids[0], None)
    repo.close()
    return db


def test_piped_games_follow_columns_and_keep_names_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``COLUMNS=80 referee games | less``: every table line fits 80 columns; the game and
    verdict every row shares are said once under it, so both course bots keep their names."""
    db = _games_db(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["games", "--db", db]) == 0
    out = capsys.readouterr().out
    lines = _table_lines(out)
    assert lines and all(len(line) <= 80 for line in lines), out
    rows = [line for line in lines if line.startswith("│") and line.split("│")[1].strip()]
    assert len(rows) == 2 and all(set(BOTS) <= set(row.split()) for row in rows), out
    assert "game: tetress (every row)" in out and "verdict: normal (every row)" in out


def test_long_names_sharing_a_start_stay_told_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names too long for 80 columns are cut in the middle: two course bots that share their
    first 20 letters still read differently."""
    names = ("course_submission_of_ann_greedy", "course_submission_of_ann_random")
    db = _games_db(tmp_path, names)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["games", "--db", db]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in _table_lines(out)), out
    row = next(line for line in _table_lines(out) if line.startswith("│  1 "))
    first, second = (cell.strip() for cell in row.split("│")[2:4])
    assert "…" in first and first != second, row
    assert first.endswith("greedy") and second.endswith("random"), row


def test_doctor_folds_its_fixes_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long finding and fix (a path, a command) are folded onto more lines, never cut."""
    fix = "systemctl edit referee.service --drop-in=/etc/systemd/system/referee.service.d/x"
    found = "/sys/fs/cgroup/memory/process_arena/referee/bots/writable-and-delegated"
    monkeypatch.setenv("COLUMNS", "80")
    _table([Check("memory cgroup", Status.DEGRADED, found, fix)])
    out = capsys.readouterr().out
    lines = _table_lines(out)
    assert all(len(line) <= 80 for line in lines) and "…" not in out, out
    cells = [line.split("│") for line in lines if line.startswith("│")]
    assert "".join(c[3].strip() for c in cells) == found.replace(" ", "")
    assert "".join(c[4].strip() for c in cells).replace(" ", "") == fix.replace(" ", "")


def test_doctor_says_skipped_for_the_database_without_db() -> None:
    """Without ``--db`` the database is not looked at: "skipped", not "works"."""
    [database] = [c for c in CHECKS if c.__name__ == "_database"]
    check = database(Context())
    assert check.status is Status.SKIPPED and str(check.status) == "skipped"
    assert "--db" in check.detail
