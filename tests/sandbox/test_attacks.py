"""Attack bots in the real sandbox, in real games: every attack fails, the game goes on (or
ends with the right verdict), and the referee, the opponent and a bystander are unaffected."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from engine.registry import load_game
from referee.play.local import MatchResult, play_match
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec

from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

ATTACKER = Path(__file__).parent / "bots" / "attacker"
OPPONENT = "from client_sdk.examples.random_bot import RandomBot as Agent  # noqa: F401\n"


@dataclass
class Stage:
    """The host around one attack game: what the attacker goes after."""

    attacker: Path
    opponent: Path
    database: Path
    secret: str
    bystander: subprocess.Popen[bytes]
    listener: socket.socket


@pytest.fixture
def stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stage]:
    require_sandbox()
    secret = secrets.token_hex(12)
    # A secret in the referee's environment, as a database URL with its password would be.
    monkeypatch.setenv("TETROMINO_DATABASE_URL", f"postgresql://postgres:{secret}@127.0.0.1/x")
    database = tmp_path / "arena.db"
    database.write_text(f"the referee's database {secret}")
    opponent = tmp_path / "opponent_bot"
    opponent.mkdir()
    (opponent / "__init__.py").write_text(OPPONENT)
    # A bystander process of the referee's user, standing for the other bots on the machine.
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    listener = socket.create_server(("127.0.0.1", 0))
    attacker = tmp_path / "attacker"
    shutil.copytree(ATTACKER, attacker, ignore=shutil.ignore_patterns("__pycache__"))
    targets = {
        "database": str(database),
        "opponent_source": str(opponent / "__init__.py"),
        "referee_code": str(Path(__file__).resolve()),
        "secret_value": secret,
        "referee_pid": os.getpid(),
        "opponent_pid": bystander.pid,
        "tcp_port": listener.getsockname()[1],
        # Where the referee is installed: its checkout and its virtualenv (the interpreter's
        # own installation may show: docs/sandbox.md says why that is harmless).
        "host_paths": sorted(
            {str(Path(__file__).resolve().parents[2])}
            | ({sys.prefix} if sys.prefix != sys.base_prefix else set())
        ),
    }
    # Every host path a mount table could name: those, the Python installation, the home
    # folder and this test's temp folder.
    targets["mount_paths"] = sorted(
        {*targets["host_paths"], sys.base_prefix, str(Path.home()), str(tmp_path), "/root"}
    )
    (attacker / "targets.json").write_text(json.dumps(targets))
    try:
        yield Stage(attacker, opponent, database, secret, bystander, listener)
    finally:
        bystander.kill()
        bystander.wait()
        listener.close()


def _play(stage: Stage, attack: str, memory_mb: float = 250) -> MatchResult:
    specs = [BotSpec("sdk", f"{stage.attacker}:{attack}"), BotSpec("sdk", str(stage.opponent))]
    return asyncio.run(
        play_match(specs, load_game("tetress"), memory_mb=memory_mb, isolation=Isolation.BWRAP)
    )


def _check(stage: Stage, result: MatchResult, attack: str, blocked: list[str]) -> str:
    """The checks every attack game passes; returns the attacker's output."""
    out = result.output(0)
    assert f"ATTACKS DONE {attack}" in out, out
    assert "ESCAPED" not in out and "ATTACK " + attack + ": ERROR" not in out, out
    for name in blocked:
        assert f"ATTACK {name}: BLOCKED" in out, (name, out)
    report = result.report
    assert report.labels["sandbox"] == "bwrap"
    assert report.end is not None
    assert report.end.verdict.value in ("normal", "turn_limit"), report.end
    assert report.plies > 2
    assert result.bots[1].describe_exit() == "exited with code 0", result.output(1)
    # The bystander, the referee's files and the referee itself are untouched.
    assert psutil.Process(stage.bystander.pid).status() not in ("stopped", "zombie")
    assert stage.database.read_text().startswith("the referee's database")
    assert "pwned" not in (stage.opponent / "__init__.py").read_text()
    leftovers = [
        p for p in psutil.Process().children(recursive=True) if p.pid != stage.bystander.pid
    ]
    assert not [p for p in leftovers if p.is_running() and p.status() != "zombie"], leftovers
    return out


CASES = {
    "ReadFiles": ["shadow", "database", "opponent_source", "referee_code"],
    "ReadEnvironment": ["environ", "proc_environ"],
    "ReadTokens": ["own_token_exposed", "pids_visible"],
    "Signals": ["kill_referee", "kill_opponent", "other_pids", "kill_parent"],
    "Writes": ["write", "fill_scratch", "fill_shm"],
    "Network": ["connect", "listen", "raw", "packet", "netlink"],
    "Ptrace": ["ptrace_child", "ptrace_parent"],
    "Escape": ["capabilities", "cgroup_move", "mount", "unshare", "setns", "bpf", "keyctl"],
    "Daemon": ["daemon"],
    "HostPaths": ["proc_cmdline", "proc_environ", "sys_path"],
    "HostMounts": ["mount_table"],
}


@pytest.mark.parametrize("attack", sorted(CASES))
def test_attack_fails_and_the_game_goes_on(stage: Stage, attack: str) -> None:
    """Each attack is refused inside the sandbox; the game finishes normally."""
    result = _play(stage, attack)
    out = _check(stage, result, attack, CASES[attack])
    if attack == "Writes":
        assert "No space left on device after 6" in out or "after 5" in out, out
    if attack == "ReadEnvironment":
        assert stage.secret not in out and "TETROMINO_DATABASE_URL" not in out
    if attack == "Daemon":
        survivors = [
            p for p in psutil.process_iter(["cmdline"]) if "600.4242" in (p.info["cmdline"] or [])
        ]
        assert not survivors, survivors


def test_fork_bomb_meets_the_task_cap_and_the_game_goes_on(stage: Stage) -> None:
    """Starting processes past the task cap is refused inside the sandbox (where a ``pids``
    cgroup exists); the bot cleans up and the game finishes normally."""
    result = _play(stage, "ForkBomb", memory_mb=2000)
    out = _check(stage, result, "ForkBomb", ["fork_bomb"])
    assert "Resource temporarily unavailable" in out, out


def test_a_fork_bomb_meets_the_process_cap_not_the_memory_limit(stage: Stage) -> None:
    """Copies of a Python bot share their pages copy-on-write: counted once, they stay under
    the memory limit, so the bomb meets the process cap, and its verdict says so."""
    result = _play(stage, "CopyBomb")
    end = result.report.end
    assert end is not None and end.offender == 0, end
    # The bomb takes its own connection down (its gRPC threads are refused too): a crash or a
    # disconnect, either way saying that it reached the process cap, never a memory verdict.
    assert end.verdict in ("runtime_error", "disconnect"), end
    assert "after reaching its limit of 256 processes and threads (" in end.reason, end.reason
    assert "memory" not in end.reason, end.reason
    assert "Resource temporarily unavailable" in result.output(0)


@pytest.mark.parametrize(
    ("bot", "verdict", "sentence"),
    [
        ("Hog", "memory", "exceeded its memory"),
        ("Crash", "runtime_error", "killed by signal SIGSEGV"),
    ],
)
def test_limits_hold_inside_the_sandbox(
    stage: Stage, bot: str, verdict: str, sentence: str
) -> None:
    """A sandboxed bot over its memory limit loses by MLE, one that segfaults by a runtime
    error naming the signal (not the sandbox's exit code); the opponent is unaffected."""
    result = _play(stage, bot)
    end = result.report.end
    assert end is not None and end.verdict.value == verdict and end.offender == 0, end
    assert sentence in end.reason, end.reason
    assert result.report.labels["sandbox"] == "bwrap"
    assert psutil.Process(stage.bystander.pid).status() not in ("stopped", "zombie")
    leftovers = [
        p for p in psutil.Process().children(recursive=True) if p.pid != stage.bystander.pid
    ]
    assert not [p for p in leftovers if p.is_running() and p.status() != "zombie"], leftovers
