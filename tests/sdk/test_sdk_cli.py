"""`python -m client_sdk` reports load and connection failures with distinct exit codes and
never writes to stdout."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client_sdk", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_unloadable_bot_exits_2(refused_port: int) -> None:
    """A BOT that names nothing exits with status 2 and says why on stderr."""
    proc = _run("--server", f"127.0.0.1:{refused_port}", "no_such_bot_anywhere")
    assert proc.returncode == 2
    assert "no such directory, file or module" in proc.stderr
    assert proc.stdout == ""


def test_unreachable_referee_exits_1_without_reconnect(refused_port: int) -> None:
    """With --no-reconnect, a referee that cannot be reached ends the run with status 1."""
    port = refused_port
    proc = _run("--server", f"127.0.0.1:{port}", "--no-reconnect", "client_sdk.examples.random_bot")
    assert proc.returncode == 1
    assert f"127.0.0.1:{port}" in proc.stderr
    assert proc.stdout == ""


def test_help_goes_to_stdout() -> None:
    """--help is the one thing written to stdout (the bot's own prints go to stderr)."""
    proc = _run("--help")
    assert proc.returncode == 0
    assert "--server" in proc.stdout and proc.stderr == ""
