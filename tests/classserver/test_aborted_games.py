"""A game cut by the server going away is aborted for the bots, never a loss: a graceful stop
(SIGTERM) sends GameOver ABORTED, and after a hard kill (SIGKILL) the SDK counts the game as
aborted whether it gives up on the referee or finds a restarted one."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.classserver.serving import ENV, PYTHON, ROOT, serve

SLOW_BOT = str(ROOT / "tests" / "faults" / "bots" / "slow_bot.py")
ABORTED_TALLY = "[client_sdk] 1 game(s): 0 won, 0 drawn, 0 lost, 1 aborted"


class Bot:
    """``python -m client_sdk`` with a bot slow enough (0.3 s a move) to be cut mid-game;
    its stderr is read as it comes."""

    def __init__(self, address: str, name: str, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "client_sdk", "--server", address, "--name", name, *flags, SLOW_BOT],
            cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env=dict(ENV, SLOW_BOT_DELAY="0.3"),
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None or self._reader.is_alive(), "\n".join(self.lines)
            assert time.monotonic() < deadline, f"no {text!r} in:\n" + "\n".join(self.lines)
            time.sleep(0.05)

    def finish(self, timeout: float = 120) -> tuple[int, list[str]]:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("client did not finish:\n" + "\n".join(self.lines)) from None
        self._reader.join(10)
        return code, self.lines


@pytest.mark.slow
def test_a_graceful_stop_tells_both_bots_their_game_was_aborted(tmp_path: Path) -> None:
    """SIGTERM mid-game: both bots hear GameOver ABORTED and tally it as aborted, not lost."""
    with serve(tmp_path, "--no-web", "--shutdown-grace", "0.5") as address:
        bots = [Bot(address, name) for name in ("stop-a", "stop-b")]
        for bot in bots:
            bot.wait_for(": tetress, playing ")
    for bot in bots:
        code, lines = bot.finish()
        assert code == 0, lines
        assert any(" aborted (the referee stopped the game)" in line for line in lines), lines
        assert lines[-1] == ABORTED_TALLY


def _serve_unix(socket: Path, log: Path) -> subprocess.Popen[str]:
    """``referee serve`` on a Unix socket (so that a restart finds the same address)."""
    ready = socket.with_suffix(".address")
    ready.unlink(missing_ok=True)
    with log.open("a") as out:
        proc = subprocess.Popen(
            [PYTHON, "-m", "referee.commands.main", "serve", "--listen", f"unix:{socket}",
             "--address-file", str(ready), "--no-web"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=ENV, text=True,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (ready.exists() and ready.read_text().strip()):
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "referee serve did not start"
        time.sleep(0.1)
    return proc


@pytest.mark.slow
def test_a_killed_server_leaves_aborted_games_not_losses(tmp_path: Path) -> None:
    """SIGKILL mid-game: a bot that does not reconnect ends with the game aborted (exit 1,
    tally then the reason); a bot that reconnects to the restarted server learns from its new
    run that the game was never finished, and counts it aborted."""
    socket, log = tmp_path / "referee.sock", tmp_path / "serve.log"
    server = _serve_unix(socket, log)
    try:
        once = Bot(f"unix:{socket}", "kill-once", "--no-reconnect")
        back = Bot(f"unix:{socket}", "kill-back", "--games", "1")
        for bot in (once, back):
            bot.wait_for(": tetress, playing ")
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
        code, lines = once.finish()
        assert code == 1, lines
        assert any(
            "aborted: the connection to the referee was lost for good: the game's result is "
            "unknown" in line
            for line in lines
        ), lines
        assert lines[-2] == ABORTED_TALLY
        assert lines[-1].startswith(f"python -m client_sdk: connection to unix:{socket} failed")
        back.wait_for("connection lost")
        server = _serve_unix(socket, log)
        code, lines = back.finish()
        assert code == 0, lines
        assert any(
            "aborted: the referee restarted while the connection was down: the game was never "
            "finished (no result)" in line
            for line in lines
        ), lines
        assert lines[-1] == ABORTED_TALLY
    finally:
        server.kill()
        server.wait(30)
