"""A remote bot's failure, reproduced from its stored pack: a real ``referee serve``, the bot a
real ``python -m client_sdk`` process on 127.0.0.1. The starter written by ``client_sdk new``
is replayed move for move (the game handed it a seed, its pack carries it); a bot drawing from
an unseeded generator is told at its first differing answer that the replay diverged, and no
verdict is invented for a position the game never reached."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.classserver.serving import ENV, PYTHON, RANDOM, ROOT, finish, players, serve

pytestmark = pytest.mark.slow

#: Appended to a bot's ``choose_move``: the bot raises at its fourth move.
FAULT = """
    _moves = 0

    def choose_move(self, state, clocks):
        self._moves += 1
        if self._moves == 4:
            raise RuntimeError("broken on the fourth move")
        return self.rng.choice(list(state.legal_moves))
"""


def _starter(tmp: Path, *, unseeded: bool = False) -> Path:
    """The ``client_sdk new`` starter made to raise at its fourth move (``unseeded``: with the
    generator it used to make, ``random.Random()``)."""
    subprocess.run(
        [PYTHON, "-m", "client_sdk", "new", "starter", "--dir", str(tmp)],
        check=True, cwd=ROOT, env=ENV, capture_output=True,
    )  # fmt: skip
    package = tmp / "starter" / "starter"
    source = (package / "__init__.py").read_text()
    assert "random.Random(game_seed())" in source
    if unseeded:
        source = source.replace("random.Random(game_seed())", "random.Random()")
    (package / "__init__.py").write_text(source + FAULT)
    return package


def _client(address: str, token: str, bot: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, "-m", "client_sdk", "--server", address, "--token", token, "--games", "1", bot],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip


def _fail_and_reproduce(tmp: Path, bot: Path) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """One casual game on a real server between ``bot`` (alice's, remote) and the random bot,
    then ``reproduce GAME_ID BOT --server`` as alice: (the stored pack, the command's exit
    status, its JSON)."""
    from referee.storage import Repository

    db = tmp / "arena.db"
    tokens = players(db, "alice", "bob")
    with serve(tmp, "--db", str(db), "--no-web", "--submissions", str(tmp / "store")) as address:
        procs = [
            _client(address, tokens["alice"], str(bot)),
            _client(address, tokens["bob"], RANDOM),
        ]
        said = finish(procs)[0]
        found = re.search(r"game (\S+): tetress, playing", said)
        assert found is not None, said
        game_id = found.group(1)
        out = subprocess.run(
            [PYTHON, "-m", "client_sdk", "reproduce", game_id, str(bot), "--server", address,
             "--token", tokens["alice"], "--json"],
            cwd=ROOT, capture_output=True, text=True, env=ENV, timeout=300,
        )  # fmt: skip
    assert out.stdout.strip(), out.stderr
    packs = [p for p in Repository.open(str(db)).get_game(game_id).failure_packs if p]
    assert len(packs) == 1, "the faulted seat has a pack"
    return json.loads(packs[0]), out.returncode, json.loads(out.stdout.strip().splitlines()[-1])


def test_the_starter_failing_on_a_server_is_reproduced_move_for_move(tmp_path: Path) -> None:
    """The starter (faulting at its fourth move) played remotely: its pack carries the seed the
    game handed it, and the replay answers as in the game and reaches the same verdict."""
    pack, code, replay = _fail_and_reproduce(tmp_path, _starter(tmp_path))
    assert pack["verdict"] == "runtime_error" and isinstance(pack["seed"], int), pack
    assert code == 0, replay
    assert replay["match"] is True and replay["diverged"] is None, replay
    assert replay["answers"] == 3 and replay["reproduced"]["ply"] == pack["fault_ply"]


def test_an_unseeded_bot_is_told_where_the_replay_diverged(tmp_path: Path) -> None:
    """A bot drawing from ``random.Random()`` answers otherwise at its first move: the replay
    stops there naming the ply, the game's move and this one, and judges nothing after it
    (no invented illegal move)."""
    pack, code, replay = _fail_and_reproduce(tmp_path, _starter(tmp_path, unseeded=True))
    assert code == 1 and replay["match"] is False, replay
    diverged = replay["diverged"]
    own = [m["ply"] for m in pack["moves"]]
    assert diverged is not None and diverged["ply"] in own, replay
    # (its first answer, unless a fresh generator drew the game's move by chance)
    assert replay["answers"] == own.index(diverged["ply"]), replay
    assert diverged["recorded"] != diverged["replayed"], replay
    assert replay["reproduced"]["verdict"] is None, replay
    assert f"diverged at ply {diverged['ply']}" in replay["reproduced"]["reason"], replay
