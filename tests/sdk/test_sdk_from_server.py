"""A student's laptop, end to end: a fresh virtualenv holding only the wheel the class server
serves (installed with pip from the running server's /sdk URL on 127.0.0.1), in which a
starter bot is created, plays a local game, plays a remote game against the server, and is
uploaded and accepted. Its dependencies come from whatever index this machine's pip is
configured with, as on a student's machine; the SDK itself only from the server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.classserver.serving import players

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def _serve(tmp: Path, db: Path) -> Iterator[tuple[str, str]]:
    """``referee serve`` with its web front, uploads and a database, each on a free port;
    yields (referee address, web URL)."""
    address_file = tmp / "address"
    log_path = tmp / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TETROMINO_SDK_CACHE": str(tmp / "sdk-cache")}
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "referee.commands.main", "serve", "--listen", "127.0.0.1:0",
             "--web", "127.0.0.1:0", "--address-file", str(address_file), "--db", str(db),
             "--submissions", str(tmp / "store"), "--shutdown-grace", "2",
             "--param", "turn_limit=40"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env, text=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        web = None
        while web is None:
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            found = re.search(r"web_listening.*url=(http://\S+)", log_path.read_text())
            web = found.group(1) if found and address_file.exists() else None
            time.sleep(0.1)
        yield address_file.read_text().split()[0], web
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_fresh_venv_with_the_served_wheel_plays_locally_remotely_and_uploads(
    tmp_path: Path,
) -> None:
    """pip installs the SDK from the server's /sdk URL into a fresh venv; there the starter
    bot plays a local game, a remote game against the server's other bot, and is uploaded
    and accepted; the venv holds none of the server's packages."""
    import httpx

    db = tmp_path / "arena.db"
    tokens = players(db, "alice", "bob")
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    (laptop / "token.txt").write_text(tokens["alice"] + "\n", encoding="utf-8")
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    assert made.returncode == 0, made.stderr
    python = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    with _serve(tmp_path, db) as (address, web):
        facts = httpx.get(f"{web}/api/sdk", timeout=600).json()
        assert facts["url"].startswith(web + "/sdk/")
        pip = _run([python, "-m", "pip", "install", "--quiet", facts["url"]], laptop)
        assert pip.returncode == 0, pip.stderr
        assert _run([python, "-c", "import structlog"], laptop).returncode == 1

        def sdk(*args: str) -> subprocess.CompletedProcess[str]:
            return _run([python, "-m", "client_sdk", *args], laptop)

        assert sdk("new", "my_bot").returncode == 0
        bot = laptop / "my_bot"
        local = _run([python, "-m", "client_sdk", "play", "my_bot", "--json"], bot)
        assert local.returncode == 0, local.stderr
        game = json.loads(local.stdout.splitlines()[-1])["games"][0]
        assert game["verdict"] in ("normal", "turn_limit"), game

        opponent = subprocess.Popen(
            [sys.executable, "-m", "client_sdk", "--server", address, "--token", tokens["bob"],
             "--games", "1", "client_sdk.examples.random_bot"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        remote = _run(
            [python, "-m", "client_sdk", "--server", address, "--token-file",
             str(laptop / "token.txt"), "--games", "1", "my_bot"],
            bot,
        )  # fmt: skip
        _, opponent_said = opponent.communicate(timeout=300)
        assert remote.returncode == 0, remote.stderr + opponent_said
        assert "1 game(s)" in remote.stderr and "0 aborted" in remote.stderr, remote.stderr

        upload = _run(
            [python, "-m", "client_sdk", "submit", "--server", address, "--token-file",
             str(laptop / "token.txt"), "my_bot", "--json"],
            bot,
        )  # fmt: skip
        result = json.loads(upload.stdout.strip().splitlines()[-1])
        assert result["status"] == "accepted", result
        refused = _run(
            [python, "-c", "import sys, client_sdk._session as s; s.PROTOCOL_VERSION += 1; "
             "from client_sdk.__main__ import main; sys.exit(main(sys.argv[1:]))",
             "--server", address, "--token-file", str(laptop / "token.txt"), "my_bot"],
            bot,
        )  # fmt: skip
        assert refused.returncode == 1
        # The referee names its own /sdk page to a bot speaking another protocol.
        assert f"get it at {web}/sdk" in refused.stderr, refused.stderr
