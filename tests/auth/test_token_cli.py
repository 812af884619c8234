"""``referee player``: tokens issued with a role and an expiry, and listed with both."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from referee.commands.main import main
from referee.storage import Repository
from referee.storage.enums import Role
from referee.storage.models import utcnow


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_player_token_takes_role_and_expiry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``player add --role`` and ``player token --role --expires 30d`` issue tokens that
    resolve to that role and expire then; ``player list`` shows role and state."""
    db = str(tmp_path / "arena.db")
    out = _run(capsys, "player", "add", "prof", "--role", "instructor", "--db", db, "--create")
    instructor = out.strip().splitlines()[-1]
    out = _run(capsys, "player", "token", "prof", "--expires", "30d", "--db", db)
    assert "student token for prof, expires" in out
    student = out.strip().splitlines()[-1]
    _run(capsys, "player", "token", "prof", "--expires", "2020-01-01", "--db", db)
    repo = Repository.open(db)
    try:
        first, second = repo.resolve_token(instructor), repo.resolve_token(student)
        assert first is not None and first.role is Role.INSTRUCTOR and first.expires_at is None
        assert second is not None and second.role is Role.STUDENT
        assert second.expires_at is not None
        assert abs(second.expires_at - (utcnow() + timedelta(days=30))) < timedelta(minutes=5)
    finally:
        repo.close()
    listed = _run(capsys, "player", "list", "--db", db)
    assert "instructor active" in listed and "expired" in listed


def test_bad_expiry_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An expiry that is neither a duration nor a date is refused before anything is issued."""
    with pytest.raises(SystemExit) as exited:
        main(["player", "token", "prof", "--expires", "soon", "--db", str(tmp_path / "x.db")])
    assert exited.value.code == 2
    assert "neither a duration" in capsys.readouterr().err
