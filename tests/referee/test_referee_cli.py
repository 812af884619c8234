"""The ``referee`` command line, run as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rawbots import RAWBOT, REPO

from engine.records import read_json, read_record

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow

REFEREE = [sys.executable, "-m", "referee.commands.main"]


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REFEREE, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout
    )


def test_match_json_prints_one_object_and_writes_the_record(tmp_path: Path) -> None:
    """`referee match A B --json --record F`: stdout is exactly one JSON object with the
    result fields; the record file reads back with the same result and length."""
    record = tmp_path / "game.pgn"
    out = _run(
        "match",
        "client_sdk.examples.random_bot",
        "client_sdk.examples.greedy_bot",
        "--json",
        "--record",
        str(record),
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["winner"] in ("RED", "BLUE", "DRAW")
    assert result["verdict"] in ("normal", "turn_limit")
    assert result["termination"] and result["reason"] and result["plies"] > 0
    for seat in ("RED", "BLUE"):
        info = result["seats"][seat]
        assert info["time_used_s"] > 0
        assert info["peak_memory_mb"] > 0
    parsed = read_record(record.read_text())
    assert parsed.plies == result["plies"]
    assert parsed.result == result["result"]


def test_match_course_package_against_a_shell_command_bot() -> None:
    """A course-style package directory plays a bot given as a shell command; the command
    bot's illegal move ends the game with that verdict and a sentence naming its seat."""
    command = f"{sys.executable} {RAWBOT} --server {{server}} --token {{token}} "
    command += "--behaviour illegal --at 3"
    out = _run("match", "client_sdk/examples/course_random", command, "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "illegal_move", result
    assert result["winner"] == "RED"
    assert result["reason"].startswith("BLUE played an illegal move")


def test_match_crashing_bot_is_a_runtime_error_with_its_exit(tmp_path: Path) -> None:
    """A bot process that dies mid-game loses by runtime error and its exit code is named;
    the JSON record says so too."""
    command = f"{sys.executable} {RAWBOT} --server {{server}} --token {{token}} "
    record = tmp_path / "game.json"
    out = _run(
        "match",
        command + "--behaviour crash --at 2",
        "client_sdk.examples.random_bot",
        "--game",
        "att",
        "--json",
        "--record",
        str(record),
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "runtime_error", result
    assert result["winner"] == "PLACER"
    assert "exited with code 3" in result["reason"]
    text = record.read_text()
    parsed = read_json(text)
    assert parsed.result == "0-1" and parsed.termination == "crash"
    assert parsed.plies == result["plies"]
    assert json.loads(text)["referee"]["verdict"] == "runtime_error"


def test_match_verbose_shows_the_board_and_a_result_line() -> None:
    """-v prints each move with both clocks and the board, then the result line."""
    out = _run(
        "match",
        "client_sdk.examples.random_bot",
        "client_sdk.examples.random_bot",
        "--game",
        "att",
        "-v",
        "--time",
        "30",
    )
    assert out.returncode == 0, out.stderr
    assert "1. CHOOSER" in out.stdout
    assert "CHOOSER 30.00 s left" in out.stdout or "CHOOSER 29." in out.stdout
    assert "wins after" in out.stdout or "Draw after" in out.stdout


def test_match_rejects_an_unknown_game() -> None:
    """A usage error (unknown game) exits with status 2 and says why."""
    out = _run("match", "a", "b", "--game", "chess")
    assert out.returncode == 2
    assert "chess" in out.stderr


def test_serve_pairs_remote_sdk_bots_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`referee serve` answers health checks, pairs two SDK bots for their games, writes the
    records, and exits cleanly on SIGTERM."""
    address_file = tmp_path / "address"
    records = tmp_path / "records"
    server = subprocess.Popen(
        [
            *REFEREE,
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--address-file",
            str(address_file),
            "--records",
            str(records),
            "--game",
            "tetress",
            "--log-format",
            "json",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    bots: list[subprocess.Popen[str]] = []
    try:
        deadline = time.monotonic() + 30
        while not address_file.exists() or not address_file.read_text().strip():
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        address = address_file.read_text().split()[0]
        with grpc.insecure_channel(address) as channel:
            status = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="tetromino.referee.v1.Referee"), timeout=10
            )
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        for _ in range(2):
            bots.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "client_sdk",
                        "--server",
                        address,
                        "--games",
                        "2",
                        "client_sdk.examples.random_bot",
                    ],
                    cwd=REPO,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
        for bot in bots:
            assert bot.wait(60) == 0
        written = sorted(records.glob("*.pgn"))
        assert len(written) == 2
        for path in written:
            parsed = read_record(path.read_text())
            assert parsed.plies > 0 and parsed.result in ("1-0", "0-1", "1/2-1/2")
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
        output = server.stderr.read() if server.stderr else ""
        logs = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
        over = [entry for entry in logs if entry.get("event") == "game_over"]
        assert len(over) == 2
        assert all({"game_id", "seat", "ply"} <= entry.keys() for entry in logs)
        assert all(entry["game_id"] for entry in over)
    finally:
        for proc in [*bots, server]:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow
def test_sigterm_during_the_load_check_still_ends_in_an_aborted_game() -> None:
    """A SIGTERM that arrives while the bots are still being checked (before the game's own
    handler is in place) does not kill `referee match`: the game is stopped at once and
    recorded as aborted, with the one JSON object and exit status 1."""
    import psutil

    RANDOM = "client_sdk.examples.random_bot"
    match = subprocess.Popen(
        [*REFEREE, "match", *[RANDOM] * 2, "--json", "--shutdown-grace", "0.2"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        parent = psutil.Process(match.pid)
        deadline = time.monotonic() + 30
        while not parent.children(recursive=True):  # the first load-check process
            assert time.monotonic() < deadline and match.poll() is None
            time.sleep(0.02)
        match.send_signal(signal.SIGTERM)
        assert match.wait(60) == 1
        assert match.stdout is not None
        result = json.loads(match.stdout.read())
        assert result["verdict"] == "aborted"
    finally:
        if match.poll() is None:
            match.kill()
            match.wait()


def test_sigterm_stops_a_match_and_every_bot_it_started(tmp_path: Path) -> None:
    """SIGTERM during a game: after the grace period `referee match` records the game as
    aborted (exit status 1, the JSON result says so) and leaves no bot process behind."""
    import psutil

    sleeper = f"{sys.executable} {RAWBOT} --server {{server}} --token {{token}} "
    sleeper += "--behaviour sleep --sleep 600"
    match = subprocess.Popen(
        [
            *REFEREE,
            "match",
            sleeper,
            "client_sdk.examples.random_bot",
            "--json",
            "--shutdown-grace",
            "0.5",
            "--log-level",
            "info",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "match.err").open("w"),
        text=True,
    )
    try:
        parent = psutil.Process(match.pid)
        deadline = time.monotonic() + 30
        children: list[psutil.Process] = []
        while len(children) < 2:
            assert time.monotonic() < deadline and match.poll() is None
            time.sleep(0.1)
            children = parent.children(recursive=True)
        # The game starts once both bots' sessions are open (the referee logs each).
        while (tmp_path / "match.err").read_text().count("session_open") < 2:
            assert time.monotonic() < deadline and match.poll() is None
            time.sleep(0.05)
        children = parent.children(recursive=True)
        match.send_signal(signal.SIGTERM)
        assert match.wait(30) == 1
        _, alive = psutil.wait_procs(children, timeout=5)
        assert not alive, alive
        assert match.stdout is not None
        result = json.loads(match.stdout.read())
        assert result["verdict"] == "aborted" and result["winner"] == "ABORTED"
    finally:
        if match.poll() is None:
            match.kill()
            match.wait()
