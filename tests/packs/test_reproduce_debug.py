"""``reproduce --pdb`` stops in the bot's own code at the failing move on the terminal (a real
pseudo-terminal here), and ``--until`` leaves the bot's process running at a ply."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
RAISE = f"{Path(__file__).parent / 'bots' / 'faulty.py'}:Raise"
WAIT_S = 120.0


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pack of a bot that raises at its fourth move, from a real sandboxed match."""
    record = tmp_path_factory.mktemp("packs") / "game.json"
    out = subprocess.run(
        [sys.executable, "-m", "referee.commands.main", "match", RAISE,
         "client_sdk.examples.random_bot", "--record", str(record), "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return Path(json.loads(out.stdout.strip().splitlines()[-1])["seats"]["RED"]["failure_pack"])


class Terminal:
    """A command on a pseudo-terminal: what it printed so far, and typing into it."""

    def __init__(self, *argv: str) -> None:
        pid, self.fd = pty.fork()
        if pid == 0:  # the child: becomes the command, the pty its controlling terminal
            os.chdir(REPO)
            os.execv(sys.executable, [sys.executable, *argv])
        self.pid = pid
        self.text = ""

    def expect(self, wanted: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while wanted not in self.text:
            assert time.monotonic() < deadline, f"no {wanted!r} in:\n{self.text}"
            ready, _, _ = select.select([self.fd], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"ended before {wanted!r}:\n{self.text}"
                self.text += chunk.decode(errors="replace")
        return self.text

    def type(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def wait(self) -> int:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            with_status = os.waitpid(self.pid, os.WNOHANG)
            if with_status[0]:
                return os.waitstatus_to_exitcode(with_status[1])
            try:
                if select.select([self.fd], [], [], 0.2)[0]:
                    self.text += os.read(self.fd, 4096).decode(errors="replace")
            except OSError:
                pass
        raise AssertionError(f"still running:\n{self.text}")


def test_pdb_stops_in_the_bots_code_at_the_failing_move(pack: Path) -> None:
    """--pdb: the debugger stops in faulty.py during the fourth move (not in the SDK); after
    `continue`, the bot raises and the verdict matches the game's."""
    term = Terminal("-m", "client_sdk", "reproduce", str(pack), RAISE, "--pdb")
    term.expect("(Pdb)")
    assert "faulty.py" in term.text and "_driver.py" not in term.text.split("(Pdb)")[0][-400:]
    term.type("p self.moves")
    term.expect("\n3")  # before its fourth move counts itself
    term.type("c")
    assert term.wait() == 0, term.text
    assert "match: the same verdict at the same ply" in term.text


def test_until_leaves_the_bot_running_at_a_ply(pack: Path) -> None:
    """--until 4: the requests before ply 4 are replayed, the bot's process stays alive
    (its pid printed) until Enter, then it is ended and the command exits 0."""
    term = Terminal("-m", "client_sdk", "reproduce", str(pack), RAISE, "--until", "4")
    text = term.expect("press Enter")
    assert "before ply 4" in text
    pid = int(text.split("(pid ")[1].split(")")[0])
    assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    assert "move 3" not in text  # its third move (ply 5) was never asked for
    term.type("")
    assert term.wait() == 0, term.text
    deadline = time.monotonic() + WAIT_S
    while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.05)
