"""Faults through the command line, as real processes: MLE in `referee match --json`, a course
bot that returns None, and SIGTERM to `referee match` / `referee serve` mid-game (the game is
recorded as aborted, never as a loss, and every bot the referee launched is gone)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import psutil
import pytest

from client_sdk.proto import referee_pb2 as pb
from engine.records import read_record

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).parent / "bots"
FAULTBOT = BOTS / "faultbot.py"
SLOW_BOT = str(BOTS / "slow_bot.py")
REFEREE = [sys.executable, "-m", "referee.commands.main"]


def _faultbot(fault: str, at: int = 2) -> str:
    return (
        f"cmd:{sys.executable} {FAULTBOT} --server {{server}} --token {{token}} "
        f"--fault {fault} --at {at}"
    )


def _run(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REFEREE, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout
    )


def test_match_mle_names_the_peak_and_how_memory_was_measured(tmp_path: Path) -> None:
    """A launched bot allocating without end loses by MLE; --json and the record carry each
    seat's peak memory and how it was measured."""
    record = tmp_path / "game.json"
    out = _run(
        "match",
        "client_sdk.examples.random_bot",
        _faultbot("hog"),
        "--game",
        "att",
        "--memory",
        "150",
        "--json",
        "--record",
        str(record),
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "memory" and result["winner"] == "CHOOSER", result
    assert result["reason"].startswith("PLACER exceeded its memory: peak ")
    assert "MB of 150 MB (" in result["reason"]
    placer = result["seats"]["PLACER"]
    assert placer["memory_measured_by"] in ("rss_poll", "cgroup")
    assert placer["peak_memory_mb"] > 150
    assert result["seats"]["CHOOSER"]["memory_measured_by"] in ("rss_poll", "cgroup")
    assert 0 < result["seats"]["CHOOSER"]["peak_memory_mb"] < 150
    data = json.loads(record.read_text())
    assert data["referee"]["seats"]["PLACER"]["output"].count("misbehaving (hog)") == 1


def test_course_bot_returning_none_is_named_as_such(tmp_path: Path) -> None:
    """A course bot whose action() returns None loses by an illegal move, and the sentence
    says what it returned and what was expected (through Move.not_a_move)."""
    out = _run("match", "client_sdk.examples.course_random", str(BOTS / "course_none"), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "illegal_move", result
    assert result["reason"] == "BLUE returned None, which is not a PlaceAction"


def _first_reply(address: str) -> pb.RefereeMessage:
    """Say hello to the referee at ``address``; its first answer."""
    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(
            "/tetromino.referee.v1.Referee/Play",
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        hello = pb.BotMessage(
            hello=pb.Hello(bot_name="late", protocol_version=pb.PROTOCOL_VERSION_CURRENT)
        )
        reply: pb.RefereeMessage = next(iter(play(iter([hello]), timeout=10)))
        return reply


def _descendants(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def _pythons(pid: int) -> list[psutil.Process]:
    found = []
    for child in _descendants(pid):
        with contextlib.suppress(psutil.Error):
            if "python" in child.name():
                found.append(child)
    return found


def test_sigterm_to_match_records_the_game_as_aborted_and_stops_every_bot(
    tmp_path: Path,
) -> None:
    """SIGTERM to `referee match` mid-game: the game may finish within the grace period, else
    it is aborted (no winner, no loser) and recorded; no bot process survives."""
    record = tmp_path / "game.pgn"
    env = dict(os.environ, SLOW_BOT_DELAY="0.3")
    proc = subprocess.Popen(
        [
            *REFEREE,
            "match",
            SLOW_BOT,
            _faultbot("noterm", at=6),
            "--game",
            "att",
            "--json",
            "--record",
            str(record),
            "--shutdown-grace",
            "1",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        # Both game bots (two Pythons; the load check before the game starts only one).
        while len(_pythons(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2.0)  # into the game
        bots = _descendants(proc.pid)
        assert bots
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1, stderr
    result = json.loads(stdout)
    assert result["verdict"] == "aborted" and result["winner"] == "ABORTED", result
    assert "shut down" in result["reason"]
    assert read_record(record.read_text()).result == "*"
    _, alive = psutil.wait_procs(bots, timeout=5)
    assert not alive, alive


def test_sigterm_to_serve_lets_games_finish_within_grace_then_aborts_them(
    tmp_path: Path,
) -> None:
    """SIGTERM to `referee serve`: it stops accepting (a new bot is told it is shutting down),
    a game that cannot finish within the grace period is recorded as aborted, and the server
    exits cleanly."""
    records = tmp_path / "records"
    address_file = tmp_path / "address"
    serve = subprocess.Popen(
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
            "att",
            "--shutdown-grace",
            "3",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    bots: list[subprocess.Popen[str]] = []
    try:
        deadline = time.monotonic() + 30
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        address = address_file.read_text().split()[0]
        env = dict(os.environ, SLOW_BOT_DELAY="0.5", PYTHONPATH=str(REPO))
        for name in ("a", "b"):
            bots.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "client_sdk",
                        f"--server={address}",
                        "--name",
                        name,
                        "--no-reconnect",
                        "--",
                        SLOW_BOT,
                    ],
                    cwd=REPO,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
        time.sleep(4.0)  # both connected and a game under way
        serve.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert _first_reply(address).error.code == pb.ERROR_CODE_SHUTTING_DOWN
        _, stderr = serve.communicate(timeout=60)
        assert serve.returncode == 0, stderr
        for bot in bots:
            bot.wait(timeout=30)
    finally:
        for p in (serve, *bots):
            p.kill()
    files = sorted(records.glob("*.pgn"))
    assert files, stderr
    results = [read_record(f.read_text()) for f in files]
    assert results[-1].result == "*", [r.result for r in results]
    assert 'Verdict "aborted"' in files[-1].read_text()
