"""Challenges decided by the bot's author (``Agent.accept_challenge``) and the per-player cap
on open challenges, with real remote clients against a real ``referee serve``."""

from __future__ import annotations

from pathlib import Path

import pytest
from serving import RANDOM, client, finish, serve
from serving import bot_until as _bot
from serving import players as _tokens
from serving import stop as _stop

pytestmark = pytest.mark.slow

PICKY = "tests/classserver/bots/picky_bot.py"


def test_agent_accept_challenge_decides_without_the_option(tmp_path: Path) -> None:
    """Without --accept-challenges the bot's accept_challenge answers: carol's challenge is
    declined with that reason, alice's is accepted and played."""
    db = tmp_path / "arena.db"
    tokens = _tokens(db, "alice", "bob", "carol")
    with serve(tmp_path, "--db", str(db), "--param", "turn_limit=12") as address:
        bob, bob_err = _bot(tmp_path, address, PICKY, "--token", tokens["bob"], "--name", "picky",
                            "--games", "1", until="waiting: no opponent")  # fmt: skip
        try:
            # One after the other: bob plays one game only, and then leaves.
            carol = client(address, RANDOM, "--token", tokens["carol"], "--name", "rnd",
                           "--challenge", "bob/picky")  # fmt: skip
            (carol_err,) = finish([carol])
            alice = client(address, RANDOM, "--token", tokens["alice"], "--name", "rnd",
                           "--challenge", "bob/picky")  # fmt: skip
            (alice_err,) = finish([alice])
            assert bob.wait(60) == 0
        finally:
            _stop(bob)
    assert carol.returncode == 1, carol_err
    assert "bob/picky declined your challenge: its accept_challenge said no" in carol_err
    assert alice.returncode == 0, alice_err
    assert "bob/picky accepted your challenge" in alice_err and "1 game(s)" in alice_err
    said = bob_err.read_text()
    assert "asked by carol/rnd to play tetress" in said
    assert "challenge from carol/rnd to play tetress: declined (its accept_challenge said no)" in (
        said
    )
    assert "challenge from alice/rnd to play tetress: accepted" in said


def test_a_flood_of_challenges_is_capped_per_player(tmp_path: Path) -> None:
    """With --max-challenges 2, alice's third to fifth challenges (sent while two are open)
    are each refused at once with a sentence naming the cap; the two open ones are not."""
    db = tmp_path / "arena.db"
    tokens = _tokens(db, "alice", "bob")
    release = tmp_path / "release"
    with serve(tmp_path, "--db", str(db), "--max-challenges", "2",
               "--challenge-wait", "600") as address:  # fmt: skip
        bob, _ = _bot(tmp_path, address, PICKY, "--token", tokens["bob"], "--name", "picky",
                      until="waiting: no opponent", PICKY_HOLD=str(release))  # fmt: skip
        challenge = ("--token", tokens["alice"], "--challenge", "bob/picky")
        opened = [
            _bot(tmp_path, address, RANDOM, *challenge, "--name", f"r{n}", until="connected to")
            for n in range(2)
        ]
        try:
            flood = [client(address, RANDOM, *challenge, "--name", f"f{n}") for n in range(3)]
            said = finish(flood, timeout=60)
            still_open = [proc.poll() is None for proc, _ in opened]
        finally:
            release.touch()
            _stop(bob, *(proc for proc, _ in opened))
    for proc, err in zip(flood, said, strict=True):
        assert proc.returncode == 1, err
        assert (
            "you already have 2 open challenge(s), the most this server allows at once (2); "
            "wait for one to finish, then challenge again" in err
        ), err
    assert still_open == [True, True]
