"""Spectating: referee watch --server lists and follows the live casual and ladder games of
referee serve (with or without --db), with real remote clients playing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from serving import GREEDY, RANDOM, cli, client, serve

from referee.storage import Repository

pytestmark = pytest.mark.slow


def _listed(address: str, mode: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = cli("watch", "--server", address, "--list")
        assert done.returncode == 0, done.stderr
        if f" {mode} " in done.stdout:
            return done.stdout
        time.sleep(0.2)
    raise AssertionError(f"no live {mode} game listed")


def test_watch_lists_and_follows_casual_games_without_db(tmp_path: Path) -> None:
    """serve without --db: watch --list shows the casual game; watch follows one to its end."""
    with serve(tmp_path) as address:
        bots = [client(address, RANDOM, "--games", "30"), client(address, GREEDY, "--games", "30")]
        try:
            listing = _listed(address, "casual")
            assert " tetress " in listing and " vs " in listing
            followed = cli("watch", "--server", address, "--wait", "30")
            assert followed.returncode == 0, followed.stderr
            lines = followed.stdout.splitlines()
            assert lines[0].startswith("tetress game ")
            assert any(line.strip().startswith("1. RED") for line in lines)
            assert lines[-1].split()[0] in ("1-0", "0-1", "1/2-1/2")
        finally:
            for bot in bots:
                bot.kill()
                bot.wait()


def test_watch_lists_ladder_games_with_db(tmp_path: Path) -> None:
    """serve --db: the rated casual games are listed as ladder games."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    tokens = {}
    for player in ("ann", "ben"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    with serve(tmp_path, "--db", str(db)) as address:
        bots = [
            client(address, RANDOM, "--token", tokens["ann"], "--games", "30"),
            client(address, GREEDY, "--token", tokens["ben"], "--games", "30"),
        ]
        try:
            assert " ladder " in _listed(address, "ladder")
        finally:
            for bot in bots:
                bot.kill()
                bot.wait()
