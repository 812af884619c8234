"""The instructor's view of presence for a tournament run by ``referee serve``: `referee
tournament presence NAME --server` and the Arena service's GetTournamentPresence show each
remote entry connected, waiting or missing, with the stated wait, before and during the run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import grpc
import pytest
from serving import RANDOM, bot_until, cli, players, serve, stop

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from referee.play.bots import register_remote
from referee.storage import Repository

pytestmark = pytest.mark.slow


def _presence(address: str, name: str) -> apb.TournamentPresence:
    with grpc.insecure_channel(address) as channel:
        return arena_pb2_grpc.ArenaStub(channel).GetTournamentPresence(
            apb.GetTournamentRequest(tournament=name), timeout=10
        )


def test_presence_before_and_during_a_hosted_tournament(tmp_path: Path) -> None:
    """Before the start alice's entry is connected and bob's missing; once the server runs the
    tournament a game waits for bob's entry (up to the 60 s wait); the CLI says the same."""
    db = tmp_path / "arena.db"
    tokens = players(db, "alice", "bob")
    repo = Repository.open(str(db))
    for player in ("alice", "bob"):  # as `referee bot add NAME --remote --owner PLAYER` does
        register_remote(repo, f"{player}-bot", owner=player)
    done = cli("tournament", "create", "cup", "alice-bot", "bob-bot", "--db", str(db))
    assert done.returncode == 0, done.stderr
    with serve(tmp_path, "--db", str(db), "--no-web", "--remote-timeout", "60") as address:
        alice, _ = bot_until(tmp_path, address, RANDOM, "--token", tokens["alice"],
                             "--name", "alice-bot", until="waiting: no opponent")  # fmt: skip
        try:
            before = cli("tournament", "presence", "cup", "--server", address)
            assert before.returncode == 0, before.stderr
            assert before.stdout.splitlines() == [
                f"tournament cup (created, not running yet on {address}); a game waits up to "
                "60 s for a remote entry",
                "alice-bot@1  alice  --name alice-bot  connected",
                "bob-bot@1  bob  --name bob-bot  missing (not connected; once the tournament "
                "runs, its games forfeit after 60 s each)",
            ]
            assert cli("tournament", "start", "cup", "--db", str(db)).returncode == 0
            deadline = time.monotonic() + 60
            while not (reply := _presence(address, "cup")).running or reply.entries[1].state != (
                "waiting"
            ):
                assert time.monotonic() < deadline, reply
                time.sleep(0.2)
            assert [(e.bot, e.state, e.wait_s) for e in reply.entries] == [
                ("alice-bot@1", "connected", 60.0),
                ("bob-bot@1", "waiting", 60.0),
            ]
            during = cli("tournament", "presence", "cup", "--server", address, "--json")
            assert during.returncode == 0, during.stderr
            data = json.loads(during.stdout)
            assert data["running"] is True and data["status"] == "running"
            assert [e["state"] for e in data["entries"]] == ["connected", "waiting"]
            unknown = cli("tournament", "presence", "nope", "--server", address)
        finally:
            stop(alice)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("referee tournament presence: NOT_FOUND: ")
