"""Game choice on a real ``referee serve`` with real remote clients: the server's default
game (Tetress) unless a bot asks, never a mix, never ATT for a bot that did not ask."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from serving import GREEDY, RANDOM, client, finish, serve

pytestmark = pytest.mark.slow

GAME_LINE = re.compile(r"\] game \w+: (\w+), playing")


def _games(stderr: str) -> list[str]:
    return GAME_LINE.findall(stderr)


def test_two_bots_without_game_play_tetress(tmp_path: Path) -> None:
    """Two bots with no --game on a server offering every game play Tetress, and are told so."""
    with serve(tmp_path) as address:
        outs = finish(
            [client(address, RANDOM, "--games", "2"), client(address, GREEDY, "--games", "2")]
        )
    for out in outs:
        assert _games(out) == ["tetress", "tetress"], out
        assert "casual games: tetress (the server's default; ask for att with --game)" in out


def test_bots_that_ask_for_att_play_att_and_only_each_other(tmp_path: Path) -> None:
    """Bots asking --game att play ATT with each other; bots asking nothing play Tetress."""
    with serve(tmp_path) as address:
        procs = [
            client(address, RANDOM, "--games", "2", "--game", "att", "--name", "a1"),
            client(address, RANDOM, "--games", "2", "--name", "t1"),
            client(address, GREEDY, "--games", "2", "--game", "att", "--name", "a2"),
            client(address, GREEDY, "--games", "2", "--name", "t2"),
        ]
        outs = finish(procs)
    assert _games(outs[0]) == ["att", "att"] and _games(outs[2]) == ["att", "att"]
    assert _games(outs[1]) == ["tetress", "tetress"] and _games(outs[3]) == ["tetress", "tetress"]
    assert "against a2" in outs[0] and "against t2" in outs[1]
    assert "casual games: att (as asked)" in outs[0]


def test_server_default_game_is_settable(tmp_path: Path) -> None:
    """serve --default-game att pairs bots that ask for nothing in ATT."""
    with serve(tmp_path, "--default-game", "att") as address:
        outs = finish(
            [client(address, RANDOM, "--games", "1"), client(address, GREEDY, "--games", "1")]
        )
    assert all(_games(out) == ["att"] for out in outs), outs


def test_asking_for_a_game_the_server_does_not_offer(tmp_path: Path) -> None:
    """A bot asking for a game the server does not offer is refused at once, saying why."""
    with serve(tmp_path, "--game", "tetress") as address:
        (out,) = finish([client(address, RANDOM, "--game", "att")])
    assert "this referee plays tetress" in out
