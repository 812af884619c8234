"""Sandboxed bots of a tournament on a server each get a private socket for their game only."""

from __future__ import annotations

import asyncio
import glob
import os
import re
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from tournament_helpers import PYTHON, RANDOM, ROOT

from referee.sandbox.relay import SocketRelay
from referee.storage import Repository
from tests.sandbox.sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

SOCKET_BOT = """
import socket
import sys
from client_sdk.examples.random_bot import RandomBot


class Agent(RandomBot):
    def choose_move(self, *args, **kwargs):
        if not getattr(self, "said", False):
            self.said = True
            # The peer's name is the path the listening socket was bound to on the host.
            with socket.socket(socket.AF_UNIX) as s:
                s.connect("/run/arena/referee.sock")
                print("PEER", s.getpeername(), file=sys.stderr, flush=True)
        return super().choose_move(*args, **kwargs)
"""


_RUN = [PYTHON, "-m", "referee.commands.main", "tournament", "run"]
_LISTEN = ["--listen", "127.0.0.1:0", "--no-progress", "--remote-timeout", "60"]
_SDK = [PYTHON, "-m", "client_sdk"]


def _relay_folders(pid: int) -> set[str]:
    """The game-socket folders of process ``pid`` (other tests' games run beside this one)."""
    return set(glob.glob(os.path.join(tempfile.gettempdir(), f"arena-game-sock-{pid}.*")))


def _cli(db: Path, *args: str) -> str:
    done = subprocess.run(
        [PYTHON, "-m", "referee.commands.main", *args, "--db", str(db), "--create"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_each_launched_bot_reaches_the_server_through_its_own_game_socket(
    tmp_path: Path,
) -> None:
    """On a ``--listen`` server, a launched bot playing a remote one reaches the referee
    through a socket bound for its game only (a different path in every game, not the
    server's own socket), and every game's socket and folder are gone afterwards."""
    require_sandbox()
    db = tmp_path / "arena.db"
    token = _cli(db, "player", "add", "ann").strip().splitlines()[-1]
    _cli(db, "bot", "add", "ann-bot", "--remote", "--owner", "ann")
    folder = tmp_path / "peer_bot"
    folder.mkdir()
    (folder / "__init__.py").write_text(SOCKET_BOT)
    _cli(db, "bot", "add", "peer", str(folder))
    _cli(db, "tournament", "create", "socks", "ann-bot", "peer", "--param", "turn_limit=10")
    runner = subprocess.Popen(
        [*_RUN, "socks", "--db", str(db), *_LISTEN],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    remote = None
    try:
        assert runner.stderr is not None
        line = runner.stderr.readline()
        assert "listening on" in line, line
        remote = subprocess.Popen(
            [*_SDK, "--server", line.split()[-1], "--token", token, "--name", "ann-bot", RANDOM],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        out, err = runner.communicate(timeout=240)
        assert runner.returncode == 0, out + err
    finally:
        for proc in (runner, remote):
            if proc is not None and proc.poll() is None:
                proc.terminate()
            if proc is not None:
                proc.wait(10)
    repo = Repository.open(str(db))
    games = repo.list_games()
    assert len(games) == 2
    peers = []
    for game in games:
        assert game.sandbox == "bwrap"
        texts = repo.get_game(game.id).stderr
        found = re.findall(r"PEER (\S+)", " ".join(t or "" for t in texts))
        assert len(found) == 1, texts
        assert re.fullmatch(rf".*/arena-game-sock-{runner.pid}\.[^/]+/referee\.sock", found[0])
        peers.append(found[0])
    assert peers[0] != peers[1], peers
    assert _relay_folders(runner.pid) == set()


@pytest.mark.asyncio
async def test_a_relay_forwards_bytes_and_is_gone_after_its_game(tmp_path: Path) -> None:
    """A relay copies bytes both ways to the server's socket; closed, its socket and folder
    are removed and nothing can connect to it any more."""
    upstream = str(tmp_path / "server.sock")

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"echo:" + await reader.readexactly(5))
        await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(echo, path=upstream)
    relay = SocketRelay(f"unix:{upstream}")
    address = await relay.start()
    assert address != f"unix:{upstream}"
    assert os.stat(Path(relay.path).parent).st_mode & 0o777 == 0o700
    reader, writer = await asyncio.open_unix_connection(relay.path)
    writer.write(b"hello")
    assert await reader.read() == b"echo:hello"
    writer.close()
    await relay.close()
    assert not Path(relay.path).parent.exists()
    with pytest.raises(OSError), socket.socket(socket.AF_UNIX) as probe_socket:
        probe_socket.connect(relay.path)
    server.close()
