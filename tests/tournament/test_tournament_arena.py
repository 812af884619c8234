"""The Arena gRPC service on a real server (127.0.0.1, port 0), remote registered bots with
stored tokens, and ``referee serve --db``."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path

import grpc
import pytest
from tournament_helpers import (
    COURSE_RANDOM,
    GREEDY,
    PYTHON,
    RANDOM,
    ROOT,
    make_tournament,
    unix_address,
)

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from engine.adjudication.verdicts import Verdict
from engine.records import read_record, replay
from referee.live.hub import LiveHub
from referee.play.bots import register_remote
from referee.rpc.arena import ArenaService
from referee.server.app import RefereeServer
from referee.server.auth import LaunchTokens
from referee.server.storedauth import StoredTokenAuth
from referee.storage import Repository, SourceKind, TournamentFormat
from referee.tournament.runner import RunSummary, TournamentRunner

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def _server(repo: Repository, hub: LiveHub) -> RefereeServer:
    return RefereeServer(
        auth=LaunchTokens(StoredTokenAuth(repo)),
        games=["tetress"],
        services=[ArenaService(repo, hub)],
    )


def test_arena_serves_tables_games_records_and_a_live_move_stream(tmp_path: Path) -> None:
    """A spectator of a running game gets the start, every move in order and the end; the
    stored record has the same moves; tables, status, games and the ladder are served."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    t = make_tournament(repo, "live", TournamentFormat.ROUND_ROBIN, [RANDOM, GREEDY], turn_limit=30)

    async def main() -> dict[str, object]:
        hub = LiveHub()
        server = _server(repo, hub)
        address = await server.start("127.0.0.1:0", also=[unix_address()])
        runner = asyncio.create_task(
            TournamentRunner(repo, t.id, hub=hub, server=server.handle(), concurrency=1).run()
        )
        out: dict[str, object] = {}
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)
                async with asyncio.timeout(30):
                    while not (live := await stub.ListLiveGames(apb.ListLiveGamesRequest())).games:
                        await asyncio.sleep(0.01)
                uid = live.games[0].uid
                out["watched"] = [e async for e in stub.WatchGame(apb.WatchGameRequest(uid=uid))]
                out["summary"] = await runner
                out["record"] = await stub.GetGame(apb.GetGameRequest(game=uid))
                out["replayed"] = [e async for e in stub.WatchGame(apb.WatchGameRequest(uid=uid))]
                out["board"] = await stub.GetLeaderboard(
                    apb.GetLeaderboardRequest(tournament="live")
                )
                out["status"] = await stub.GetTournament(
                    apb.GetTournamentRequest(tournament="live")
                )
                out["games"] = await stub.ListGames(apb.ListGamesRequest(tournament=str(t.id)))
                out["ladder"] = await stub.GetLadder(apb.GetLadderRequest())
                out["tournaments"] = await stub.ListTournaments(apb.ListTournamentsRequest())
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await stub.GetGame(apb.GetGameRequest(game="no-such-game"))
                out["missing"] = missing.value.code()
        finally:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
            await server.stop(0)
        return out

    out = asyncio.run(main())
    watched = out["watched"]
    assert isinstance(watched, list)
    kinds = [e.WhichOneof("kind") for e in watched]
    assert kinds[0] == "start" and kinds[-1] == "end" and set(kinds[1:-1]) <= {"move"}
    moves = [e.move for e in watched[1:-1]]
    assert [m.ply for m in moves] == list(range(len(moves))) and moves
    record = out["record"]
    assert isinstance(record, apb.GameRecord)
    stored = read_record(record.record_text)
    assert len(stored.moves) == len(moves)
    assert replay(stored).to_string() == moves[-1].position
    assert watched[-1].end.result == record.summary.result
    assert json.loads(record.record_json)["referee"]["game_id"] == record.summary.uid
    replayed = out["replayed"]
    assert isinstance(replayed, list)
    assert [e.move.action for e in replayed[1:-1]] == [m.action for m in moves]
    assert replayed[-2].move.position == moves[-1].position
    board = out["board"]
    assert isinstance(board, apb.Leaderboard)
    assert len(board.rows) == 2 and sum(r.games for r in board.rows) == 4
    assert "1500" in board.anchor and len(board.cross) == 2
    status = out["status"]
    assert isinstance(status, apb.TournamentStatus)
    assert (status.status, status.games_finished, status.games_remaining) == ("finished", 2, 0)
    games = out["games"]
    assert isinstance(games, apb.ListGamesResponse) and len(games.games) == 2
    ladder = out["ladder"]
    assert isinstance(ladder, apb.Ladder) and ladder.games == 2 and len(ladder.rows) == 2
    assert out["missing"] == grpc.StatusCode.NOT_FOUND


def test_registered_remote_bots_play_with_their_stored_tokens(tmp_path: Path) -> None:
    """Two remote bots (SDK processes connecting with their owners' tokens) and one launched
    bot play a round robin on the tournament's server: every game is counted, each seat is
    the registered version, and a wrong token is refused."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    tokens = {}
    for player in ("alice", "bob"):
        repo.create_player(player)
        tokens[player] = repo.issue_token(player)
    register_remote(repo, "alice-bot", owner="alice")
    register_remote(repo, "bob-bot", owner="bob")
    t = make_tournament(
        repo, "remote", TournamentFormat.ROUND_ROBIN, ["alice-bot", "bob-bot", COURSE_RANDOM]
    )
    clients: list[subprocess.Popen[str]] = []

    def connect(address: str, token: str, name: str, bot: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "client_sdk",
                "--server",
                address,
                "--token",
                token,
                "--name",
                name,
                "--no-reconnect",
                bot,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        clients.append(proc)
        return proc

    async def main() -> tuple[RunSummary, int]:
        server = _server(repo, LiveHub())
        address = await server.start("127.0.0.1:0", also=[unix_address()])
        try:
            connect(address, tokens["alice"], "alice-bot", RANDOM)
            connect(address, tokens["bob"], "bob-bot", GREEDY)
            intruder = connect(address, tokens["bob"] + "x", "alice-bot", RANDOM)
            runner = TournamentRunner(repo, t.id, server=server.handle(), remote_timeout=60)
            summary = await runner.run()
            code = await asyncio.to_thread(intruder.wait, 30)
            return summary, code
        finally:
            await server.stop(0.5)

    try:
        summary, intruder_code = asyncio.run(main())
    finally:
        for proc in clients:
            if proc.poll() is None:
                proc.terminate()
            proc.wait(10)
    assert summary.complete
    assert intruder_code != 0
    games = repo.list_games(tournament_id=t.id)
    assert len(games) == 6
    assert all(g.counted and g.verdict in (Verdict.NORMAL, Verdict.TURN_LIMIT) for g in games)
    kinds = {v.id: v.source_kind for v in repo.tournament_entrants(t.id)}
    remote_seats = [
        s for g in games for s in g.seats if kinds[s.bot_version_id] is SourceKind.REMOTE
    ]
    assert len(remote_seats) == 8
    # The launched bot ran under the sandbox (measured), the remote ones only report.
    measures = {kinds[s.bot_version_id]: s.memory_measure for g in games for s in g.seats}
    assert measures[SourceKind.REMOTE] == "self_reported"
    assert measures[SourceKind.PACKAGE] in ("rss_poll", "cgroup")


def test_serve_db_takes_stored_tokens_stores_casual_games_and_serves_the_arena(
    tmp_path: Path,
) -> None:
    """``referee serve --db`` accepts bots with stored tokens and refuses others; the games
    its matchmaker pairs are stored (registering each owner's bot on its first game) and
    feed the live ladder; Arena calls are answered from the same database."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    good = {}
    for player in ("carol", "erin"):
        repo.create_player(player)
        good[player] = repo.issue_token(player)
    make_tournament(repo, "listed", TournamentFormat.ROUND_ROBIN, [RANDOM, GREEDY])
    address_file = tmp_path / "address"
    server = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.commands.main",
            "serve",
            "--db",
            str(db),
            "--listen",
            "127.0.0.1:0",
            "--address-file",
            str(address_file),
            "--param",
            "turn_limit=10",
            "--game",
            "tetress",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not address_file.exists() or not address_file.read_text().strip():
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        address = address_file.read_text().split()[0]
        with grpc.insecure_channel(address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            listed = stub.ListTournaments(apb.ListTournamentsRequest(), timeout=10)
        assert [t.name for t in listed.tournaments] == ["listed"]
        base = [PYTHON, "-m", "client_sdk", "--server", address, "--no-reconnect", "--games", "1"]
        players = [
            subprocess.Popen([*base, "--token", good[p], "--name", f"{p}-bot", RANDOM], cwd=ROOT)
            for p in ("carol", "erin")
        ]
        refused = subprocess.run(
            [*base, "--token", "arena_0000000000000000_nope", RANDOM],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert refused.returncode != 0
        assert [p.wait(30) for p in players] == [0, 0]
        deadline = time.monotonic() + 20
        while repo.latest_ratings("openskill", ladder="main") is None:
            assert time.monotonic() < deadline, "the casual game did not reach the ladder"
            time.sleep(0.1)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    (game,) = repo.list_games()
    assert game.tournament_id is None and game.counted
    owners = {v.id: v.owner_id for v in repo.list_bot_versions()}
    carol, erin = repo.get_player("carol").id, repo.get_player("erin").id
    assert sorted(owners[s.bot_version_id] or 0 for s in game.seats) == sorted([carol, erin])
    assert {v.label for v in repo.list_bot_versions() if v.source_kind is SourceKind.REMOTE} == {
        "carol/carol-bot@1",
        "erin/erin-bot@1",
    }
    ladder = repo.latest_ratings("openskill", ladder="main")
    assert ladder is not None and ladder.games_counted == 1


def test_a_remote_bot_that_never_connects_forfeits_by_disconnect(tmp_path: Path) -> None:
    """A registered remote bot that is not connected within the remote timeout loses its
    games by ``disconnect`` (the launched opponent is never blamed)."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("dave")
    register_remote(repo, "dave-bot", owner="dave")
    t = make_tournament(repo, "absent", TournamentFormat.ROUND_ROBIN, ["dave-bot", RANDOM])

    async def main() -> RunSummary:
        server = _server(repo, LiveHub())
        await server.start("127.0.0.1:0", also=[unix_address()])
        try:
            return await TournamentRunner(
                repo, t.id, server=server.handle(), remote_timeout=8.0
            ).run()
        finally:
            await server.stop(0.5)

    assert asyncio.run(main()).complete
    games = repo.list_games(tournament_id=t.id)
    dave = repo.find_bot_version("dave-bot").id
    assert len(games) == 2
    for g in games:
        assert g.verdict is Verdict.DISCONNECT and g.counted
        assert g.seats[g.offender_seat or 0].bot_version_id == dave
        assert g.winner_seat == 1 - (g.offender_seat or 0)
