"""Shared by the class-server tests: a real ``referee serve`` process and real remote clients
(``python -m client_sdk`` processes) on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
RANDOM = "client_sdk.examples.random_bot"
GREEDY = "client_sdk.examples.greedy_bot"
ENV = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")


def cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """One ``referee`` command, run to completion."""
    return subprocess.run(
        [PYTHON, "-m", "referee.commands.main", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
    )


@contextmanager
def serve(tmp: Path, *flags: str) -> Iterator[str]:
    """``referee serve`` on a free port; yields its address; stopped with SIGTERM after."""
    address_file = tmp / f"address-{time.monotonic_ns()}"
    log = (tmp / "serve.log").open("a")
    proc = subprocess.Popen(
        [PYTHON, "-m", "referee.commands.main", "serve", "--listen", "127.0.0.1:0",
         "--address-file", str(address_file), "--shutdown-grace", "2", *flags],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=ENV, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (address_file.exists() and address_file.read_text().strip()):
            if proc.poll() is not None:
                raise AssertionError((tmp / "serve.log").read_text())
            assert time.monotonic() < deadline, "referee serve did not start"
            time.sleep(0.1)
        yield address_file.read_text().split()[0]
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def client(address: str, bot: str, *flags: str) -> subprocess.Popen[str]:
    """A remote bot: ``python -m client_sdk --server ADDRESS BOT``."""
    return subprocess.Popen(
        [PYTHON, "-m", "client_sdk", "--server", address, *flags, bot],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def finish(procs: Sequence[subprocess.Popen[str]], timeout: float = 120) -> list[str]:
    """Wait for clients; their stderr (everything a client says)."""
    out = []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            raise AssertionError(f"client did not finish:\n{err}") from None
        out.append(err)
    return out


def players(db: Path, *names: str) -> dict[str, str]:
    """Stored players with a token each: name -> token."""
    from referee.storage import Repository

    repo = Repository.open(str(db))
    tokens = {}
    for player in names:
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    return tokens


def bot_until(
    tmp: Path, address: str, bot: str, *flags: str, until: str, **env: str
) -> tuple[subprocess.Popen[str], Path]:
    """A remote bot whose stderr goes to a file; returns once that file shows ``until``."""
    out = tmp / f"bot-{time.monotonic_ns()}.err"
    with out.open("w") as handle:
        proc = subprocess.Popen(
            [PYTHON, "-m", "client_sdk", "--server", address, *flags, bot],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=handle, text=True, env={**ENV, **env},
        )  # fmt: skip
    wait_text(out, until, proc)
    return proc, out


def wait_text(out: Path, text: str, proc: subprocess.Popen[str], count: int = 1) -> str:
    """Wait until ``out`` holds ``text`` ``count`` times (while ``proc`` runs); its text."""
    deadline = time.monotonic() + 120
    while (said := out.read_text()).count(text) < count:
        assert proc.poll() is None, said
        assert time.monotonic() < deadline, said
        time.sleep(0.1)
    return said


def stop(*procs: subprocess.Popen[str]) -> None:
    """Terminate clients (killed if they do not stop)."""
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
