"""The ladder table rebuilt after a game is stored, when the database goes away mid-rebuild."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from referee.hosting import casual
from referee.hosting.casual import CasualRecorder
from referee.storage import Repository


def test_a_rebuild_cut_off_by_the_database_is_tried_again_until_it_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild that fails because the database cannot be reached is tried again (the game
    just stored would otherwise be missing from the table until some later game's rebuild,
    and the ladder's job lost its log line); any other failure is raised as before."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    rebuilt: list[str] = []
    outage = OperationalError("SELECT", {}, Exception("connection timeout expired"))
    failures: list[Exception] = [outage, outage]

    def update_ladder(repo: Repository, ladder: str, game: str) -> Any:
        if failures:
            raise failures.pop()
        rebuilt.append(game)

    monkeypatch.setattr(casual, "update_ladder", update_ladder)
    monkeypatch.setattr(asyncio, "sleep", _no_wait)
    try:
        asyncio.run(CasualRecorder(repo).refresh_ladder("tetress"))
        assert rebuilt == ["tetress"] and not failures
        failures.append(ValueError("a bug, not an outage"))
        with pytest.raises(ValueError):
            asyncio.run(CasualRecorder(repo).refresh_ladder("tetress"))
    finally:
        repo.close()


async def _no_wait(seconds: float) -> None:
    return None
