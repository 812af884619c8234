"""Shared by the worker tests: tournaments of fast bots, and ``referee worker`` processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from referee.play.bots import register_source, resolve_bot
from referee.storage import Repository, TournamentFormat, TournamentInfo, TournamentSettings

ROOT = Path(__file__).resolve().parents[2]
RANDOM = "client_sdk.examples.random_bot"
GREEDY = "client_sdk.examples.greedy_bot"
REFEREE = [sys.executable, "-m", "referee.commands.main"]
#: Short games keep the suite fast; the queue does not care how long a game is.
TURN_LIMIT = 8


def make_tournament(
    repo: Repository,
    name: str,
    bots: Sequence[str],
    *,
    turn_limit: int = TURN_LIMIT,
    games_per_pairing: int = 2,
    per_move: float = 0.0,
    per_game: float = 60.0,
    names: Sequence[str] = (),
) -> TournamentInfo:
    """A round robin of ``bots`` (registered under ``names`` when given)."""
    if names:
        versions = [register_source(repo, b, name=n) for b, n in zip(bots, names, strict=True)]
    else:
        versions = [resolve_bot(repo, b) for b in bots]
    return repo.create_tournament(
        TournamentSettings(
            name=name,
            format=TournamentFormat.ROUND_ROBIN,
            game="tetress",
            game_params={"turn_limit": turn_limit},
            time_control={"per_game": per_game, "per_move": per_move, "grace": 1.0},
            games_per_pairing=games_per_pairing,
        ),
        [v.id for v in versions],
    )


def start_worker(
    url: str,
    log: Path,
    *,
    heartbeat: float = 0.5,
    stall: float = 3.0,
    concurrency: int = 1,
    extra: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """A ``referee worker`` process logging JSON lines to ``log`` (``extra``: more options)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [
        *REFEREE,
        "worker",
        "--db",
        url,
        "--concurrency",
        str(concurrency),
        "--heartbeat",
        str(heartbeat),
        "--stall-timeout",
        str(stall),
        "--log-format",
        "json",
        "--name",
        log.stem,
        *extra,
    ]
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)


def stop_workers(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGCONT (if stopped) then SIGTERM each worker; SIGKILL those still running after 20 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def log_lines(log: Path) -> list[dict[str, Any]]:
    """The JSON log lines of a worker (other lines skipped)."""
    lines = []
    for raw in log.read_text(errors="replace").splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue
    return [line for line in lines if isinstance(line, dict)]


class ProcessWatch:
    """Every process descended from some roots, sampled on a thread until :meth:`stop`; then
    which of them still run (a bot a dead worker left behind would be among them)."""

    def __init__(self, roots: Sequence[subprocess.Popen[bytes]], every_s: float = 0.1) -> None:
        import threading

        self.roots = list(roots)
        self.seen: dict[int, float] = {}
        self.every_s = every_s
        self._lock = threading.Lock()  # the sampler adds to seen while alive() reads it
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        self.roots.append(proc)

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            for root in list(self.roots):
                try:
                    for child in psutil.Process(root.pid).children(recursive=True):
                        started = child.create_time()
                        with self._lock:
                            self.seen.setdefault(child.pid, started)
                except psutil.Error:
                    continue

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def alive(self) -> list[int]:
        """Descendants seen that still run now (same pid and start time)."""
        left = []
        with self._lock:
            seen = list(self.seen.items())
        for pid, started in seen:
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE:
                    left.append(pid)
            except psutil.Error:
                continue
        return left
