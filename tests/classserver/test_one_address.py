"""One address: a tournament created against a running ``referee serve --db`` is run by that
server; its remote entries are the students' clients on the server's address, its launched
entries connect to the same address; it survives a server restart."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from serving import GREEDY, RANDOM, cli, client, serve

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from engine.adjudication.verdicts import Verdict
from referee.storage import Repository, TournamentStatus

pytestmark = pytest.mark.slow


def _setup(db: Path) -> dict[str, str]:
    """Players alice and bob with tokens, each with a remote bot entry."""
    repo = Repository.open(str(db))
    tokens = {}
    for player in ("alice", "bob"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    for player in ("alice", "bob"):
        done = cli("bot", "add", f"{player}-bot", "--remote", "--owner", player, "--db", str(db))
        assert done.returncode == 0, done.stderr
    return tokens


def _wait_status(db: Path, name: str, wanted: TournamentStatus, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        status = Repository.open(str(db)).get_tournament(name).status
        if status is wanted:
            return
        time.sleep(0.5)
    raise AssertionError(f"tournament {name} is {status}, not {wanted}")


def test_server_runs_tournament_with_remote_and_launched_entries(tmp_path: Path) -> None:
    """tournament create --start against serve's db: the server plays it to the end with a
    remote client already there for casual play and a launched bot; standings are stored and
    GetTournament shows the remote entry connected."""
    db = tmp_path / "arena.db"
    tokens = _setup(db)
    with serve(tmp_path, "--db", str(db), "--no-web") as address:
        alice = client(address, RANDOM, "--token", tokens["alice"], "--name", "alice-bot")
        # A second casual bot: without the reservation it could keep alice busy casually.
        casual = client(address, RANDOM, "--token", tokens["bob"], "--name", "bob-casual")
        try:
            done = cli("tournament", "create", "cup", "alice-bot", GREEDY, "--db", str(db),
                       "--param", "turn_limit=20", "--start")  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "run by referee serve on this database" in done.stdout
            _wait_status(db, "cup", TournamentStatus.FINISHED)
            with grpc.insecure_channel(address) as channel:
                status = arena_pb2_grpc.ArenaStub(channel).GetTournament(
                    apb.GetTournamentRequest(tournament="cup"), timeout=10
                )
            assert {p.bot: p.state for p in status.presence} == {"alice-bot@1": "connected"}
        finally:
            for proc in (alice, casual):
                proc.kill()
                proc.wait()
    repo = Repository.open(str(db))
    t = repo.get_tournament("cup")
    games = repo.list_games(tournament_id=t.id)
    alice_bot = repo.find_bot_version("alice-bot").id
    assert len(games) == 2
    for g in games:
        assert g.verdict not in (Verdict.ABORTED, Verdict.DISCONNECT), g
        assert alice_bot in {s.bot_version_id for s in g.seats}
    assert repo.latest_ratings("ml_elo", tournament_id=t.id) is not None


def test_hosted_tournament_resumes_after_server_restart(tmp_path: Path) -> None:
    """A hosted tournament cut off by a server stop stays running and the next serve on the
    database finishes it (tournament start also queues one that was created before)."""
    db = tmp_path / "arena.db"
    tokens = _setup(db)
    done = cli("tournament", "create", "later", "bob-bot", RANDOM, "--db", str(db),
               "--param", "turn_limit=20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    with serve(tmp_path, "--db", str(db), "--no-web"):
        done = cli("tournament", "start", "later", "--db", str(db))
        assert done.returncode == 0, done.stderr
        # bob is not connected: the server waits for him (default: 300 s per game).
        _wait_status(db, "later", TournamentStatus.RUNNING, timeout=60)
    assert Repository.open(str(db)).get_tournament("later").status is TournamentStatus.RUNNING
    with serve(tmp_path, "--db", str(db), "--no-web") as address:
        bob = client(address, RANDOM, "--token", tokens["bob"], "--name", "bob-bot")
        try:
            _wait_status(db, "later", TournamentStatus.FINISHED)
        finally:
            bob.kill()
            bob.wait()
    repo = Repository.open(str(db))
    games = repo.list_games(tournament_id=repo.get_tournament("later").id)
    assert len(games) == 2
    assert all(g.verdict is not Verdict.DISCONNECT for g in games)


def test_start_refuses_a_finished_tournament(tmp_path: Path) -> None:
    """tournament start on a finished tournament: one line, exit 2."""
    db = tmp_path / "arena.db"
    _setup(db)
    done = cli("tournament", "quick", "--name", "q", RANDOM, GREEDY, "--db", str(db),
               "--param", "turn_limit=10", "--no-progress", "--no-ladder")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = cli("tournament", "start", "q", "--db", str(db))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "referee tournament start: tournament q is finished: nothing left to run"
    )


def test_casual_pairing_leaves_a_waiting_tournaments_bots_alone(tmp_path: Path) -> None:
    """While a hosted tournament waits for one entry, its connected entry is not paired
    casually (the same two sessions are paired without the reservation)."""
    import asyncio
    import sys

    from serving import ENV, ROOT

    from engine.registry import load_game
    from referee.hosting.host import TournamentHost
    from referee.hosting.matchmaker import Matchmaker
    from referee.server.app import RefereeServer
    from referee.server.auth import LaunchTokens
    from referee.server.storedauth import StoredTokenAuth

    db = tmp_path / "arena.db"
    tokens = _setup(db)
    done = cli("tournament", "create", "cup", "alice-bot", "bob-bot", "--db", str(db), "--start")
    assert done.returncode == 0, done.stderr
    repo = Repository.open(str(db))

    async def main() -> tuple[object, object]:
        server = RefereeServer(auth=LaunchTokens(StoredTokenAuth(repo)), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        host = TournamentHost(repo, server.handle(), remote_timeout=120)
        hosting = asyncio.create_task(host.run())
        argv = [sys.executable, "-m", "client_sdk", "--server", address, "--token"]
        procs = [
            await asyncio.create_subprocess_exec(
                *argv,
                tokens[owner],
                "--name",
                name,
                RANDOM,
                cwd=ROOT,
                env=ENV,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            for owner, name in (("alice", "alice-bot"), ("bob", "bob-casual"))
        ]
        try:
            async with asyncio.timeout(60):
                while len(server.lobby) < 2 or not host.running or not host.entries:
                    await asyncio.sleep(0.1)
            tetress = [load_game("tetress")]
            guarded = Matchmaker(server.lobby, tetress, reserved=host.reserved)._find_pair()
            open_pool = Matchmaker(server.lobby, tetress)._find_pair()
            return guarded, open_pool
        finally:
            hosting.cancel()
            await asyncio.gather(hosting, return_exceptions=True)
            for proc in procs:
                proc.kill()
                await proc.wait()
            await server.stop(0)

    guarded, open_pool = asyncio.run(main())
    assert guarded is None
    assert open_pool is not None
    assert Repository.open(str(db)).get_tournament("cup").status is TournamentStatus.RUNNING


def test_run_refuses_a_tournament_the_server_runs(tmp_path: Path) -> None:
    """tournament run on a tournament marked for the server: one line, exit 2, nothing played."""
    db = tmp_path / "arena.db"
    _setup(db)
    done = cli("tournament", "create", "cup", RANDOM, GREEDY, "--db", str(db), "--start")
    assert done.returncode == 0, done.stderr
    done = cli("tournament", "run", "cup", "--db", str(db), "--no-progress")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "referee tournament run: tournament cup is run by `referee serve` on this database"
        " (created with --start or started with `tournament start`); follow it with"
        " `tournament show`"
    )
    repo = Repository.open(str(db))
    assert repo.list_games(tournament_id=repo.get_tournament("cup").id) == []
