"""A worker without the sandbox plays no uploaded bot unless the operator allowed uploads to
run uncontained (``--allow-unsandboxed-uploads``), as ``serve --submissions`` does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.sandbox.isolation import Isolation, SandboxUnavailable
from referee.storage import Repository, SourceKind, open_database
from referee.storage import submissions as rows
from referee.storage.submissions import NewVersion
from referee.workers.job import WorkerState
from referee.workers.ladderjob import _player, ladder_job_kwargs


def _uploads(tmp_path: Path) -> tuple[Repository, dict[str, object]]:
    repo = Repository(open_database(f"sqlite:///{tmp_path}/arena.db"))
    seats = []
    for owner, char in (("ann", "a"), ("bob", "b")):
        repo.create_player(owner)
        digest = char * 64
        info, _ = rows.record_submission(
            repo.db,
            NewVersion(
                owner,
                f"{owner}_bot",
                digest[:12],
                digest,
                SourceKind.SDK_MODULE,
                "client_sdk.examples.random_bot",
                1,
                1,
                1,
            ),
        )
        rows.finish_validation(repo.db, info.id, accepted=True, reason="validated")
        seats.append(repo.get_bot_version(info.bot_version_id))
    game = load_game("tetress")
    kwargs = ladder_job_kwargs("g1", game, seats, TimeControl(game_time_s=10.0), None, 5.0)
    return repo, kwargs


def test_no_sandbox_alone_refuses_uploaded_ladder_bots(tmp_path: Path) -> None:
    """--no-sandbox without --allow-unsandboxed-uploads: the job names the flag and plays
    nothing; with it, the game is set up uncontained."""
    repo, kwargs = _uploads(tmp_path)
    state = WorkerState(repo, no_sandbox=True, isolation=Isolation.NONE)
    with pytest.raises(SandboxUnavailable, match="--allow-unsandboxed-uploads"):
        _player(state, kwargs)
    allowed = dataclasses.replace(state, allow_unsandboxed_uploads=True)
    player, seats = _player(allowed, kwargs)
    assert player.terms.isolation is Isolation.NONE and len(seats) == 2
    repo.close()
