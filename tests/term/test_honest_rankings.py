"""Rankings that say what they know: groups with no chain of games between them are shown
apart with no LOS across them, thin ratings are provisional with the reason, and the table
says how many games it rests on (ratings layer, CLI, web JSON and the Arena service)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from termgames import store_game

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from referee.commands.main import main
from referee.ratings import GameResult, build_leaderboard
from referee.rpc.arena import ArenaService
from referee.server.app import RefereeServer
from referee.storage import Repository, SourceKind
from referee.web.tables import build_table


def _results(pairs: list[tuple[str, str, float]]) -> list[GameResult]:
    return [GameResult(a, b, s) for a, b, s in pairs]


def _two_groups() -> list[GameResult]:
    """a, b, c play each other a lot (a strongest); x and y meet only each other, x winning."""
    games = []
    for _ in range(8):
        games += [("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0), ("b", "a", 0.5)]
    games += [("x", "y", 1.0), ("y", "x", 0.0), ("x", "y", 1.0)]
    return _results(games)


def test_disconnected_groups_are_ranked_apart_without_los_between_them() -> None:
    """Two groups: ranks restart per group, the larger group first, LOS only within a group."""
    board = build_leaderboard(_two_groups())
    assert board.groups == 2
    by = {r.player: r for r in board.rows}
    assert {by[p].group for p in "abc"} == {1} and {by[p].group for p in "xy"} == {2}
    assert [(r.group, r.rank) for r in board.rows] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2)]
    assert "x" not in board.los["a"] and "a" not in board.los["x"]
    assert board.los["x"]["y"] > 0.5 and board.los["a"]["c"] > 0.9
    assert (board.games_in(1), board.games_in(2), board.games) == (32, 3, 35)


def test_thin_ratings_are_provisional_with_the_reason() -> None:
    """A bot with 3 counted games is provisional and says why; one with 24 is not."""
    board = build_leaderboard(_two_groups())
    by = {r.player: r for r in board.rows}
    assert by["x"].provisional == "fewer than 20 counted games"
    assert by["a"].provisional is None
    assert board.as_dict()["groups"] == 2
    assert board.as_dict()["rows"][3]["provisional"] == "fewer than 20 counted games"


def _stored(tmp_path: Path) -> Repository:
    repo = Repository.open(str(tmp_path / "arena.db"))
    ids = {}
    for name in ("a", "b", "c", "x", "y"):
        ids[name] = repo.add_bot_version(
            name, "1", source_kind=SourceKind.COMMAND, location=f"./{name}"
        ).id
    for r in _two_groups():
        store_game(repo, ids[r.first], ids[r.second], 0 if r.score == 1.0 else None)
    return repo


def test_cli_prints_one_table_per_group_with_games_and_provisional_marks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`referee leaderboard --los`: a table per group saying it stands apart, the games that
    group's table rests on, a ? on thin ratings with the reason, and blank LOS across groups."""
    _stored(tmp_path).close()
    assert main(["leaderboard", "--los", "--db", str(tmp_path / "arena.db")]) == 0
    out = capsys.readouterr().out
    assert "group 1 of 2" in out and "group 2 of 2" in out
    assert "no chain of games links this group to another" in out
    # Each group's table counts its own games (32 among a, b, c; 3 between x and y), not
    # the 35 of the whole table.
    assert "rests on 32 games" in out and "rests on 3 games" in out
    assert "rests on 35 games" not in out
    assert "? provisional: fewer than 20 counted games" in out
    assert "blank: no chain of games links the two bots" in out


def test_web_table_marks_groups_and_reasons(tmp_path: Path) -> None:
    """The web's table of a game carries the group of each row and the provisional reason."""
    repo = _stored(tmp_path)
    from referee.storage.browse import played_games, version_names

    table = build_table("tetress", played_games(repo), version_names(repo))
    assert table.groups == 2
    rows = {r.version.bot: r for r in table.rows}
    assert rows["x"].row.group == 2 and rows["a"].row.group == 1
    assert rows["y"].as_dict()["provisional_reason"] == "fewer than 20 counted games"


@pytest.mark.asyncio
async def test_arena_leaderboard_reports_groups_and_provisional(tmp_path: Path) -> None:
    """GetLeaderboard over real gRPC: groups, each row's group and provisional reason."""
    repo = _stored(tmp_path)
    server = RefereeServer(games=["tetress"], services=[ArenaService(repo)])
    address = await server.start("127.0.0.1:0")
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            board = await arena_pb2_grpc.ArenaStub(channel).GetLeaderboard(
                apb.GetLeaderboardRequest()
            )
    finally:
        await server.stop(0)
        repo.close()
    assert board.groups == 2 and board.games == 35
    rows = {r.bot.split("@")[0]: r for r in board.rows}
    assert (rows["x"].group, rows["x"].rank) == (2, 1)
    assert rows["x"].provisional == "fewer than 20 counted games"
    assert rows["a"].provisional == ""


def test_web_leaderboard_page_says_the_groups_stand_apart(tmp_path: Path) -> None:
    """The rendered leaderboard marks each group and says ratings compare only within one."""
    from starlette.testclient import TestClient

    from referee.live.hub import LiveHub
    from referee.web.app import create_app
    from referee.web.context import WebSettings

    repo = _stored(tmp_path)
    settings = WebSettings(secret=b"test-secret-0123456789abcdef", refresh_s=0.0)
    with TestClient(create_app(repo, LiveHub(), settings)) as client:
        page = client.get("/leaderboard/tetress").text
        by_rating = client.get("/leaderboard/tetress?sort=rating&dir=asc").text
    repo.close()
    assert "form 2 groups with no chain of games between them" in page
    assert "Group 1 of 2" in page and "Group 2 of 2" in page
    assert page.index("Group 1 of 2") < page.index("Group 2 of 2")
    assert "Group 2 of 2" in by_rating
    assert 'title="provisional: fewer than 20 counted games"' in page
