"""A compiled (C++) bot in the real sandbox, launched as the referee launches any command bot,
compiled locally or uploaded and built by the server: its attacks on the host fail as a
Python bot's do, and the game goes on."""

from __future__ import annotations

import asyncio
import io
import os
import secrets
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import psutil
import pytest

from engine.registry import load_game
from referee.play.local import play_match
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec
from referee.submissions.limits import UploadLimits
from referee.submissions.store import SubmissionStore
from tests.languages.toolchains import CPP, require
from tests.sandbox.sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

ATTACKS = [
    "shadow",
    "database",
    "referee_code",
    "environ",
    "write",
    "connect",
    "kill_referee",
    "kill_opponent",
]


def _compile(build: Path, out: Path) -> Path:
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    binary = out / "attacker"
    argv = [
        "g++",
        "-std=c++17",
        "-O1",
        str(Path(__file__).with_name("attacker.cpp")),
        f"-I{CPP / 'include'}",
        f"-I{build / 'generated'}",
        str(build / "libtetromino_client.a"),
        *flags,
        "-o",
        str(binary),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return binary


def _upload_and_build(store_root: Path) -> str:
    """The attacker uploaded as a student's C++ bot, built by the server in the sandbox: the
    command the referee launches it with from the store."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("submission.json", '{"entry": "attacker.cpp", "language": "cpp"}')
        archive.write(Path(__file__).with_name("attacker.cpp"), "attacker.cpp")
    store = SubmissionStore(store_root)
    stored = store.ingest(data.getvalue(), UploadLimits())
    return store.build(stored.digest, stored.entry, contained=True)


def test_a_compiled_bots_attacks_fail_and_the_game_goes_on(
    cpp_bots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every attack of the C++ attacker is blocked in the sandbox; the game ends normally."""
    require_sandbox()
    require("g++", "pkg-config")
    _attack(str(_compile(cpp_bots, tmp_path)), tmp_path, monkeypatch)


def test_an_uploaded_compiled_bots_attacks_fail_and_the_game_goes_on(
    cpp_bots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker uploaded as C++ source, built by the server in the sandbox and launched
    from the store as the ladder launches it: every attack is blocked, the game ends."""
    require_sandbox()
    require("g++", "pkg-config")
    command = _upload_and_build(tmp_path / "store")
    assert "/builds/" in command
    _attack(command, tmp_path, monkeypatch)


def _attack(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Play the attacker (``command``) against a Python bot in the sandbox, with the host's
    targets named in a file it is given, and check every attack was blocked."""
    secret = secrets.token_hex(12)
    monkeypatch.setenv("TETROMINO_DATABASE_URL", f"postgresql://postgres:{secret}@127.0.0.1/x")
    database = tmp_path / "arena.db"
    database.write_text(f"the referee's database {secret}")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        targets = tmp_path / "targets.txt"
        targets.write_text(
            f"database {database}\nreferee_code {Path(__file__).resolve()}\n"
            f"write_target {tmp_path / 'pwned'}\ntcp_port {listener.getsockname()[1]}\n"
            f"referee_pid {os.getpid()}\nopponent_pid {bystander.pid}\n"
        )
        specs = [
            BotSpec("command", f"{command} {targets}"),
            BotSpec("sdk", "client_sdk.examples.random_bot"),
        ]
        result = asyncio.run(play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP))
        out = result.output(0)
        assert "ATTACKS DONE" in out, out
        for name in ATTACKS:
            assert f"ATTACK {name}: BLOCKED" in out, (name, out)
        assert "ESCAPED" not in out and secret not in out, out
        end = result.report.end
        assert result.report.labels["sandbox"] == "bwrap"
        assert end is not None and end.verdict.value in ("normal", "turn_limit"), end
        assert not (tmp_path / "pwned").exists()
        assert psutil.Process(bystander.pid).status() not in ("stopped", "zombie")
    finally:
        bystander.kill()
        bystander.wait()
        listener.close()
