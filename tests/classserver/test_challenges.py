"""Challenges: a student's bot asks a named classmate's bot (owner/name) for one game; the
challenged client accepts or declines, the challenger is told, and the game is not rated."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from serving import ENV, GREEDY, PYTHON, RANDOM, ROOT, client, finish, serve

from referee.storage import Repository

pytestmark = pytest.mark.slow


def _players(db: Path, *names: str) -> tuple[Repository, dict[str, str]]:
    repo = Repository.open(str(db))
    tokens = {}
    for player in names:
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    return repo, tokens


def _waiting_bot(tmp: Path, address: str, *flags: str) -> tuple[subprocess.Popen[str], Path]:
    """A remote bot whose stderr goes to a file; returns once it says it waits in the pool."""
    out = tmp / f"bot-{time.monotonic_ns()}.err"
    with out.open("w") as handle:
        proc = subprocess.Popen(
            [PYTHON, "-m", "client_sdk", "--server", address, *flags, GREEDY],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=handle, text=True, env=ENV,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while "waiting: no opponent for tetress yet" not in out.read_text():
        assert proc.poll() is None, out.read_text()
        assert time.monotonic() < deadline, out.read_text()
        time.sleep(0.1)
    return proc, out


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_accepted_challenge_is_played_and_not_rated(tmp_path: Path) -> None:
    """alice challenges bob/greedy, bob's client accepts, one game is played, both are told,
    alice's client exits 0, and the game is kept off the rated tables."""
    db = tmp_path / "arena.db"
    repo, tokens = _players(db, "alice", "bob")
    with serve(tmp_path, "--db", str(db)) as address:
        bob, bob_err = _waiting_bot(
            tmp_path, address, "--token", tokens["bob"], "--name", "greedy", "--games", "1"
        )
        alice = client(address, RANDOM, "--token", tokens["alice"], "--name", "rnd",
                        "--challenge", "bob/greedy")  # fmt: skip
        (alice_err,) = finish([alice])
        assert bob.wait(60) == 0
    assert alice.returncode == 0, alice_err
    assert "bob/greedy accepted your challenge: tetress starts, you move first" in alice_err
    assert "against greedy" in alice_err and "1 game(s)" in alice_err
    said = bob_err.read_text()
    assert "challenge from alice/rnd to play tetress: accepted" in said
    assert "your challenge game against alice/rnd starts (tetress)" in said
    assert "1 game(s)" in said
    assert "private_game_not_rated" in (tmp_path / "serve.log").read_text()
    assert repo.list_games() == []


def test_declined_challenge_tells_the_challenger(tmp_path: Path) -> None:
    """bob's client runs with --accept-challenges none: alice is told it declined (with bob's
    reason) and her client exits 1 without a game."""
    db = tmp_path / "arena.db"
    _, tokens = _players(db, "alice", "bob")
    with serve(tmp_path, "--db", str(db)) as address:
        bob, bob_err = _waiting_bot(
            tmp_path, address, "--token", tokens["bob"], "--name", "greedy",
            "--accept-challenges", "none",
        )  # fmt: skip
        try:
            alice = client(address, RANDOM, "--token", tokens["alice"], "--name", "rnd",
                        "--challenge", "bob/greedy")  # fmt: skip
            (alice_err,) = finish([alice])
        finally:
            _stop(bob)
    assert alice.returncode == 1, alice_err
    assert "bob/greedy declined your challenge: it accepts no challenges" in alice_err
    assert "game(s)" not in alice_err
    assert "challenge from alice/rnd to play tetress: declined" in bob_err.read_text()


def test_challenge_to_a_bot_that_is_not_connected(tmp_path: Path) -> None:
    """A challenge to a bot nobody runs fails at once with a sentence and exit code 1."""
    db = tmp_path / "arena.db"
    _, tokens = _players(db, "alice")
    with serve(tmp_path, "--db", str(db)) as address:
        alice = client(address, RANDOM, "--token", tokens["alice"], "--name", "rnd",
                        "--challenge", "bob/greedy")  # fmt: skip
        (alice_err,) = finish([alice], timeout=60)
    assert alice.returncode == 1, alice_err
    assert "bob/greedy is not connected to this server" in alice_err
