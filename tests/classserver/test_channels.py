"""Channels: two students play each other's bots in a named channel (no code shared), apart
from the open pool; channel games are not rated unless the server rates channels."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from serving import GREEDY, RANDOM, client, finish, serve

from referee.storage import Repository

pytestmark = pytest.mark.slow


def test_channel_pairs_only_its_members_and_is_not_rated(tmp_path: Path) -> None:
    """ann and ben meet in channel duel; carl and dana in the open pool; only the open game
    is stored."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    tokens = {}
    for player in ("ann", "ben", "carl", "dana"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)

    def bot(player: str, code: str, *extra: str) -> object:
        return client(address, code, "--token", tokens[player], "--name", f"{player}-bot",
                      "--games", "1", *extra)  # fmt: skip

    with serve(tmp_path, "--db", str(db)) as address:
        procs = [
            bot("ann", RANDOM, "--channel", "duel"),
            bot("carl", RANDOM),
            bot("ben", GREEDY, "--channel", "duel"),
            bot("dana", GREEDY),
        ]
        outs = finish(procs)  # type: ignore[arg-type]
        # Both games settled: the open one stored, the channel's passed over (the server
        # says so in its log), before the server stops.
        deadline = time.monotonic() + 20
        while not repo.list_games() or "private_game_not_rated" not in _log(tmp_path):
            assert time.monotonic() < deadline, _log(tmp_path)
            time.sleep(0.2)
    ann, carl, ben, dana = outs
    assert "against ben-bot" in ann and "against ann-bot" in ben
    assert "against dana-bot" in carl and "against carl-bot" in dana
    assert "channel duel: paired only with bots that join it (--channel duel)" in ann
    (game,) = repo.list_games()
    owners = {v.id: v.bot_name for v in repo.list_bot_versions()}
    assert sorted(owners[s.bot_version_id] for s in game.seats) == [
        "carl/carl-bot",
        "dana/dana-bot",
    ]


def _log(tmp: Path) -> str:
    return (tmp / "serve.log").read_text(errors="replace")


def test_rated_channels_when_the_server_says_so(tmp_path: Path) -> None:
    """serve --rate-channels stores the channel's game like any casual game."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    tokens = {}
    for player in ("ann", "ben"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    with serve(tmp_path, "--db", str(db), "--rate-channels") as address:
        finish([
            client(address, RANDOM, "--token", tokens["ann"], "--games", "1", "--channel", "x"),
            client(address, GREEDY, "--token", tokens["ben"], "--games", "1", "--channel", "x"),
        ])  # fmt: skip
        deadline = time.monotonic() + 20
        while not repo.list_games():
            assert time.monotonic() < deadline, "the channel game was not stored"
            time.sleep(0.2)
