"""``referee web`` and ``referee serve --web`` as real processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

REFEREE = [sys.executable, "-m", "referee.commands.main"]


def _wait_file(path: Path, proc: subprocess.Popen[bytes], deadline: float) -> str:
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().split()[0]
        if proc.poll() is not None:
            raise AssertionError(f"exited early with {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError(path)


def test_referee_web_serves_a_database_and_stops_on_sigterm(
    site: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """`referee web --db` serves the leaderboard of that database and exits 0 on SIGTERM."""
    address = tmp_path / "url"
    command = [*REFEREE, "web", "--db", str(site[0]), "--listen", "127.0.0.1:0"]
    proc = subprocess.Popen([*command, "--address-file", str(address)], cwd=tmp_path)
    try:
        url = _wait_file(address, proc, time.monotonic() + 30)
        with urllib.request.urlopen(f"{url}/leaderboard/tetress", timeout=10) as r:
            page = r.read().decode()
        assert ">alpha</a>" in page
        with urllib.request.urlopen(f"{url}/api/live", timeout=10) as r:
            assert r.read() == b"[]"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_serve_refuses_a_web_address_it_cannot_bind(tmp_path: Path) -> None:
    """`referee serve --web` on a port already taken exits 1 and says why."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        command = [*REFEREE, "serve", "--listen", "127.0.0.1:0", "--web", f"127.0.0.1:{port}"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 1
    assert "web front" in result.stderr


def test_serve_without_web_answers_no_http(tmp_path: Path) -> None:
    """`--no-web`: the referee runs and nothing listens for HTTP at the web address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = tmp_path / "addr"
    command = [*REFEREE, "serve", "--listen", "127.0.0.1:0", "--address-file", str(address)]
    command += ["--no-web", "--web", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(command, cwd=tmp_path, env={**os.environ})
    try:
        _wait_file(address, proc, time.monotonic() + 30)
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_tournament_run_shows_its_games_live(tmp_path: Path) -> None:
    """`referee tournament quick --web`: the run's games appear on the live list while they
    are played, and each can be followed (its event stream starts)."""
    import json
    import socket as sockets

    with sockets.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [*REFEREE, "tournament", "quick", "--db", str(tmp_path / "t.db"), "--create"]
    command += ["--no-progress", "--web", f"127.0.0.1:{port}", "--cycles", "1"]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL)
    seen: set[str] = set()
    started = False
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and not started:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/live", timeout=2) as r:
                    games = json.loads(r.read())
            except OSError:
                time.sleep(0.05)
                continue
            for game in games:
                seen.add(game["uid"])
                url = f"http://127.0.0.1:{port}/live/{game['uid']}/events"
                with urllib.request.urlopen(url, timeout=10) as stream:
                    # "retry: 3000", a blank line, then the start event.
                    started = b"event: start\n" in [stream.readline() for _ in range(3)]
                break
            time.sleep(0.05)
        assert seen and started
        assert proc.wait(120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
