"""Separate tables per game: casual Tetress and ATT games on one server never share a table;
leaderboard, ladder and games take --game; referee games shows each row's game."""

from __future__ import annotations

import json
import time
from pathlib import Path

import grpc
import pytest
from serving import GREEDY, RANDOM, cli, client, finish, serve

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from referee.storage import Repository

pytestmark = pytest.mark.slow


def test_tetress_and_att_tables_never_mix(tmp_path: Path) -> None:
    """Two students play one Tetress and one ATT casual game: each game has its own table."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    tokens = {}
    for player in ("ann", "ben"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    with serve(tmp_path, "--db", str(db)) as address:
        finish([
            client(address, RANDOM, "--token", tokens["ann"], "--name", "tbot", "--games", "1"),
            client(address, GREEDY, "--token", tokens["ben"], "--name", "tbot", "--games", "1"),
        ])  # fmt: skip
        finish([
            client(address, RANDOM, "--token", tokens["ann"], "--name", "abot", "--games", "1",
                   "--game", "att"),
            client(address, GREEDY, "--token", tokens["ben"], "--name", "abot", "--games", "1",
                   "--game", "att"),
        ])  # fmt: skip
        deadline = time.monotonic() + 30
        while len(repo.list_games()) < 2:
            assert time.monotonic() < deadline, "the casual games were not stored"
            time.sleep(0.2)
        _arena_tables_per_game(address)
    games = cli("games", "--db", str(db), "--json")
    rows = [json.loads(line) for line in games.stdout.splitlines()]
    assert sorted(r["game"] for r in rows) == ["att", "tetress"]
    table = cli("games", "--db", str(db))
    assert " game " in table.stdout and " att " in table.stdout and " tetress " in table.stdout
    only_att = [json.loads(x) for x in cli("games", "--db", str(db), "--game", "att", "--json")
                .stdout.splitlines()]  # fmt: skip
    assert [r["game"] for r in only_att] == ["att"]
    assert all(s.startswith(("ann/abot", "ben/abot")) for s in only_att[0]["seats"])
    tetress = cli("leaderboard", "--db", str(db), "--json", "-")
    att = cli("leaderboard", "--db", str(db), "--game", "att", "--json", "-")
    t_bots = {r["player"] for r in json.loads(tetress.stdout)["rows"]}
    a_bots = {r["player"] for r in json.loads(att.stdout)["rows"]}
    assert t_bots == {"ann/tbot@1", "ben/tbot@1"} and a_bots == {"ann/abot@1", "ben/abot@1"}
    ladder = cli("leaderboard", "--db", str(db), "--ladder", "--game", "att")
    assert (
        "abot" in ladder.stdout and "tbot" not in ladder.stdout and "att (1 games)" in ladder.stdout
    )
    assert repo.latest_ratings("openskill", ladder="main-att") is not None
    assert repo.latest_ratings("openskill", ladder="main") is not None


def _arena_tables_per_game(address: str) -> None:
    """The Arena service's tables and lists take the game and name it in every row; the
    leaderboard command asks a server for one game's table or ladder."""
    abots = {"ann/abot@1", "ben/abot@1"}
    with grpc.insecure_channel(address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        att = arena.GetLeaderboard(apb.GetLeaderboardRequest(game="att"), timeout=30)
        assert att.game == "att" and {r.bot for r in att.rows} == abots
        assert {r.game for r in att.rows} == {"att"}
        tetress = arena.GetLeaderboard(apb.GetLeaderboardRequest(), timeout=30)
        assert tetress.game == "tetress"
        assert {r.bot for r in tetress.rows} == {"ann/tbot@1", "ben/tbot@1"}
        ladder = arena.GetLadder(apb.GetLadderRequest(game="ATT"), timeout=30)
        assert ladder.game == "att" and {r.bot for r in ladder.rows} == abots
        assert {r.game for r in ladder.rows} == {"att"}
        games = arena.ListGames(apb.ListGamesRequest(game="att"), timeout=30).games
        assert [g.game for g in games] == ["att"]
        with pytest.raises(grpc.RpcError) as bad:
            arena.GetLeaderboard(apb.GetLeaderboardRequest(game="chess"), timeout=30)
        assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert bad.value.details() == "unknown game 'chess'; games: att, tetress"
    table = cli("leaderboard", "--server", address, "--game", "att")
    assert table.returncode == 0, table.stderr
    assert "All att games" in table.stdout and "abot" in table.stdout
    assert "tbot" not in table.stdout
    remote_ladder = cli("leaderboard", "--server", address, "--ladder", "--game", "att")
    assert remote_ladder.returncode == 0, remote_ladder.stderr
    assert "Ladder main, att (1 games)" in remote_ladder.stdout
    assert "abot" in remote_ladder.stdout and "tbot" not in remote_ladder.stdout
