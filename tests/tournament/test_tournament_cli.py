"""The arena commands end to end: ``referee player|bot|tournament|leaderboard|games|game``
as an instructor runs them, on a SQLite file, with real bot processes."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from tournament_helpers import GREEDY, ILLEGAL, PYTHON, RANDOM, ROOT

from engine.records import read_record
from referee.sandbox.isolation import probe
from referee.storage import Repository

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def _connected(pid: int, port: int, timeout: float = 60) -> None:
    """Wait until process ``pid`` has a TCP connection open to ``port``."""
    deadline = time.monotonic() + timeout
    while not any(
        c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
        for c in psutil.Process(pid).net_connections(kind="tcp")
    ):
        assert time.monotonic() < deadline, f"process {pid} never connected to port {port}"
        time.sleep(0.05)


def _cli(db: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="160")
    return subprocess.run(
        [PYTHON, "-m", "referee.commands.main", *args, "--db", str(db), "--create"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def _ok(db: Path, *args: str) -> str:
    done = _cli(db, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_players_tokens_and_bots_are_registered(tmp_path: Path) -> None:
    """``player add`` prints a token once (it authenticates; only its hash is stored),
    ``player revoke`` ends it, and ``bot add`` registers launched and remote bots."""
    db = tmp_path / "arena.db"
    out = _ok(db, "player", "add", "alice")
    token = out.strip().splitlines()[-1]
    assert token.startswith("arena_")
    repo = Repository.open(str(db))
    player = repo.authenticate(token)
    assert player is not None and player.name == "alice"
    listed = _ok(db, "player", "list")
    key_id = token.split("_")[1]
    assert key_id in listed and token not in listed
    _ok(db, "player", "revoke", key_id)
    assert repo.authenticate(token) is None

    out = _ok(db, "bot", "add", "rand", RANDOM, "--owner", "alice")
    assert "rand@" in out
    again = _ok(db, "bot", "add", "rand", RANDOM, "--owner", "alice")
    assert again == out  # the same code is the same version
    _ok(db, "bot", "add", "alice-remote", "--remote", "--owner", "alice")
    versions = {v.bot_name: v for v in repo.list_bot_versions()}
    assert versions["alice-remote"].source_kind == "remote"
    assert versions["rand"].content_hash is not None
    assert "alice-remote@1" in _ok(db, "bot", "list")
    refused = _cli(db, "bot", "add", "x", "--remote")
    assert refused.returncode == 2 and "--owner" in refused.stderr


def test_tournament_create_run_show_and_the_tables(tmp_path: Path) -> None:
    """An instructor's walk-through: create, run (progress bar, then the table), show,
    leaderboard with cross table and LOS, CSV and JSON exports, games, game export."""
    db = tmp_path / "arena.db"
    _ok(db, "bot", "add", "greedy", GREEDY)
    out = _ok(
        db,
        "tournament",
        "create",
        "class",
        "greedy",
        RANDOM,
        ILLEGAL,
        "--param",
        "turn_limit=10",
        "--forfeit",
        "loss",
        "--concurrency",
        "2",
        "--clock",
        "wall",
    )
    assert "referee tournament run class" in out
    run = _cli(db, "tournament", "run", "class")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6/6" in run.stderr and "ETA" in run.stderr
    assert "class (round_robin, tetress)" in run.stdout and "greedy" in run.stdout
    assert "anchor: average rating = 1500" in run.stdout

    show = _ok(db, "tournament", "show", "class", "--rounds")
    assert "status finished; games finished 6, remaining 0" in show
    assert "forfeits: loss" in show
    # The clock asked for at creation is kept with the tournament and charged in its games.
    assert "wall clock" in show
    assert "class" in _ok(db, "tournament", "list")

    board = _ok(db, "leaderboard", "class", "--cross", "--los")
    assert "Head to head" in board and "Likelihood of superiority" in board
    assert "illegal_move 4" in board

    csv_file, json_file = tmp_path / "table.csv", tmp_path / "table.json"
    _ok(db, "leaderboard", "class", "--csv", str(csv_file), "--json", str(json_file))
    rows = list(csv.DictReader(io.StringIO(csv_file.read_text())))
    assert len(rows) == 3 and rows[0]["rank"] == "1"
    assert sum(int(r["games"]) for r in rows) == 12
    illegal = next(r for r in rows if r["player"].startswith("IllegalBot@"))
    assert (illegal["losses"], illegal["forfeits"]) == ("4", "illegal_move:4")
    data = json.loads(json_file.read_text())
    assert data["tournament"] == "class" and len(data["rows"]) == 3
    assert "average" in data["anchor"] and data["cross_table"] and data["los"]
    assert json.loads(_ok(db, "leaderboard", "class", "--json", "-"))["rows"] == data["rows"]
    assert "provisional" in _ok(db, "leaderboard", "--ladder")

    lines = _ok(db, "games", "--tournament", "class", "--json").splitlines()
    games = [json.loads(line) for line in lines]
    assert len(games) == 6
    first = games[0]
    # Each game says which isolation its launched bots ran under (the record's Sandbox tag).
    isolation = "bwrap" if probe().available else "none"
    assert {g["sandbox"] for g in games} == {isolation}
    shown = json.loads(_ok(db, "game", "show", first["uid"], "--json"))
    # One game shown is its row in the list, plus its moves (one row a ply).
    moves = shown.pop("moves")
    assert shown == first and len(moves) == first["plies"]
    assert f"sandbox: {isolation}" in _ok(db, "game", "show", str(first["id"]))
    assert isolation in _ok(db, "games", "--tournament", "class")
    pgn = _ok(db, "game", "export", str(first["id"]))
    assert read_record(pgn).result == first["result"]
    assert read_record(pgn).tag("Clock") == "wall"
    as_json = json.loads(_ok(db, "game", "export", first["uid"], "--json"))
    assert as_json["referee"]["game_id"] == first["uid"]
    svg_file = tmp_path / "final.svg"
    _ok(db, "game", "export", str(first["id"]), "--svg", "-o", str(svg_file))
    assert svg_file.read_text().startswith("<svg")
    missing = _cli(db, "game", "export", "999")
    assert missing.returncode == 2 and "no game" in missing.stderr


def test_quick_round_robin_needs_no_set_up(tmp_path: Path) -> None:
    """``tournament quick`` creates the database, registers the bots, plays a round robin
    and prints the table in one command."""
    db = tmp_path / "new" / "arena.db"
    out = _ok(db, "tournament", "quick", RANDOM, GREEDY, "--param", "turn_limit=10")
    assert db.exists()
    assert "random_bot" in out and "greedy_bot" in out and "Elo" in out
    repo = Repository.open(str(db))
    (t,) = repo.list_tournaments()
    assert t.status == "finished" and repo.count_games(tournament_id=t.id) == 2


def test_watch_follows_a_live_game_of_a_tournament_with_remote_bots(tmp_path: Path) -> None:
    """``tournament run --listen`` serves remote bots and spectators: ``referee watch`` picks
    the live game up before it starts and prints every move and the result."""
    db = tmp_path / "arena.db"
    tokens = [_ok(db, "player", "add", p).strip().splitlines()[-1] for p in ("ann", "ben")]
    _ok(db, "bot", "add", "ann-bot", "--remote", "--owner", "ann")
    _ok(db, "bot", "add", "ben-bot", "--remote", "--owner", "ben")
    _ok(db, "tournament", "create", "net", "ann-bot", "ben-bot", "--param", "turn_limit=20")
    runner = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.commands.main",
            "tournament",
            "run",
            "net",
            "--db",
            str(db),
            "--listen",
            "127.0.0.1:0",
            "--no-progress",
            "--remote-timeout",
            "60",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    bots: list[subprocess.Popen[str]] = []
    try:
        assert runner.stderr is not None
        line = runner.stderr.readline()
        assert "listening on" in line, line
        address = line.split()[-1]
        watch = subprocess.Popen(
            [PYTHON, "-m", "referee.commands.main", "watch", "--server", address, "--wait", "60"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # The bots start once the spectator is connected: a spectator still starting up (a
        # loaded machine) could otherwise find the whole short tournament over.
        _connected(watch.pid, int(address.rsplit(":", 1)[1]))
        for token, name in zip(tokens, ("ann-bot", "ben-bot"), strict=True):
            bots.append(
                subprocess.Popen(
                    [
                        PYTHON,
                        "-m",
                        "client_sdk",
                        "--server",
                        address,
                        "--token",
                        token,
                        "--name",
                        name,
                        "--no-reconnect",
                        RANDOM,
                    ],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
        seen, err = watch.communicate(timeout=60)
        assert watch.returncode == 0, err
        out, _ = runner.communicate(timeout=60)
        assert runner.returncode == 0, out
    finally:
        for proc in [runner, *bots]:
            if proc.poll() is None:
                proc.terminate()
            proc.wait(10)
    lines = seen.splitlines()
    assert "ann-bot" in lines[0] and "ben-bot" in lines[0]
    moves = [ln for ln in lines if ln.strip()[:1].isdigit() and ". " in ln]
    assert moves and moves[0].strip().startswith("1."), seen + out
    assert any(r in lines[-1] for r in ("1-0", "0-1", "1/2-1/2"))
    assert "net (round_robin, tetress)" in out
