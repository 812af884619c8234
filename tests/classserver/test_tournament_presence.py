"""A tournament with remote entries, real remote clients: a bot joining under a name its owner
has not entered is told at once; an entry that never joins forfeits after the stated wait and
the instructor is told; presence is on the Arena service."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import grpc
import pytest
from serving import ENV, PYTHON, RANDOM, ROOT, cli, client, finish

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from engine.adjudication.verdicts import Verdict
from referee.storage import Repository

pytestmark = pytest.mark.slow


def _tokens(db: Path) -> dict[str, str]:
    repo = Repository.open(str(db))
    tokens = {}
    for player in ("alice", "bob"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    return tokens


def _read_lines(proc: subprocess.Popen[str], lines: list[str]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)


def _wait_for(lines: list[str], pattern: str, timeout: float = 60) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(lines):
            found = re.search(pattern, line)
            if found:
                return found
        time.sleep(0.1)
    raise AssertionError(f"no line matching {pattern!r} in:\n{''.join(lines)}")


def test_wrong_name_told_at_once_and_absent_entry_forfeits(tmp_path: Path) -> None:
    """Wrong --name: told which names its owner entered; a missing entry forfeits after the
    stated wait, and the instructor sees connected/waiting/missing (CLI and Arena)."""
    db = tmp_path / "arena.db"
    tokens = _tokens(db)
    for player in ("alice", "bob"):
        done = cli("bot", "add", f"{player}-bot", "--remote", "--owner", player, "--db", str(db))
        assert done.returncode == 0, done.stderr
    done = cli("tournament", "create", "class", "alice-bot", "bob-bot", RANDOM, "--db", str(db),
               "--param", "turn_limit=20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    runner = subprocess.Popen(
        [PYTHON, "-m", "referee.commands.main", "tournament", "run", "class", "--db", str(db),
         "--listen", "127.0.0.1:0", "--no-progress", "--remote-timeout", "4"],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=_read_lines, args=(runner, lines), daemon=True)
    reader.start()
    try:
        address = _wait_for(lines, r"listening on (\S+)").group(1)
        _wait_for(lines, r"presence: alice-bot@1 \(alice's bot\) is (missing|not connected)")
        wrong = client(address, RANDOM, "--token", tokens["alice"], "--name", "alicebot")
        assert wrong.stderr is not None
        told = ""
        deadline = time.monotonic() + 60
        while "has not entered" not in told and time.monotonic() < deadline:
            told += wrong.stderr.readline()
        wrong.kill()
        wrong.wait()
        assert (
            "this bot joined as 'alicebot', which alice has not entered in the running "
            "tournament class; alice's entries there: alice-bot (join with --name alice-bot)"
        ) in told
        with grpc.insecure_channel(address) as channel:
            status = arena_pb2_grpc.ArenaStub(channel).GetTournament(
                apb.GetTournamentRequest(tournament="class"), timeout=10
            )
        states = {p.bot: p.state for p in status.presence}
        assert set(states) == {"alice-bot@1", "bob-bot@1"}
        assert all(p.wait_s == 4 for p in status.presence)
        good = client(address, RANDOM, "--token", tokens["alice"], "--name", "alice-bot",
                      "--games", "2")  # fmt: skip
        _wait_for(lines, r"presence: alice-bot@1 \(alice's bot\) is connected")
        finish([good])
        assert runner.wait(180) == 0, "".join(lines)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    reader.join(5)
    assert any("bob-bot@1 (bob's bot) is not connected: a game waits for it (up to 4 s)" in x
               for x in lines), "".join(lines)  # fmt: skip
    repo = Repository.open(str(db))
    bob = repo.find_bot_version("bob-bot").id
    # A game aborted through nobody's fault (a launched bot slow to start on a busy machine)
    # is kept for its record and played again: the six slots are what must be filled.
    every = repo.list_games()
    games = [g for g in every if g.verdict is not Verdict.ABORTED]
    bobs = [g for g in games if any(s.bot_version_id == bob for s in g.seats)]
    assert len(games) == 6 and len(bobs) == 4, [(g.id, g.verdict, g.reason) for g in every]
    for g in bobs:
        assert g.verdict is Verdict.DISCONNECT
        assert g.seats[g.offender_seat or 0].bot_version_id == bob


def test_tournament_address_taken_is_one_clear_line(tmp_path: Path) -> None:
    """tournament run on an address already in use (e.g. referee serve's) says so, exit 2."""
    import socket

    db = tmp_path / "arena.db"
    _tokens(db)
    assert (
        cli("bot", "add", "bob-bot", "--remote", "--owner", "bob", "--db", str(db)).returncode == 0
    )
    assert cli("tournament", "create", "t", "bob-bot", RANDOM, "--db", str(db)).returncode == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("tournament", "run", "t", "--db", str(db), "--listen", f"127.0.0.1:{port}",
                   "--no-progress")  # fmt: skip
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"referee tournament run: cannot listen on 127.0.0.1:{port} (")
    assert last.endswith(
        "is referee serve running there? Give this tournament its own address with "
        "--listen HOST:PORT"
    )
