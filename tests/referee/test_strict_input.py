"""Strict input on a real server (127.0.0.1, port 0): every out-of-bounds field gets
INVALID_ARGUMENT naming it, an unknown id NOT_FOUND, and no Python exception reaches a client."""

from __future__ import annotations

import asyncio
import io
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc, submissions_pb2_grpc
from client_sdk.proto import submissions_pb2 as spb
from referee.live.hub import LiveHub
from referee.rpc.arena import ArenaService
from referee.rpc.live_arena import LiveArenaService
from referee.rpc.uploads import SubmissionService
from referee.server import bounds
from referee.server.app import RefereeServer
from referee.storage import Repository
from referee.storage import submissions as rows
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.telemetry import logs

Call = Callable[[arena_pb2_grpc.ArenaStub], Awaitable[Any]]


async def _codes(server: RefereeServer, calls: dict[str, Call]) -> dict[str, tuple[Any, str]]:
    """Each call's status code and details (``OK`` when it succeeds)."""
    address = await server.start("127.0.0.1:0")
    out: dict[str, tuple[Any, str]] = {}
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            for name, call in calls.items():
                try:
                    await call(stub)
                    out[name] = ("OK", "")
                except grpc.aio.AioRpcError as exc:
                    out[name] = (exc.code(), exc.details() or "")
    finally:
        await server.stop(0)
    return out


async def _all(stream: Any) -> list[Any]:
    return [event async for event in stream]


BAD_ARENA_CALLS: dict[str, tuple[Call, str]] = {
    "30-digit tournament id": (
        lambda s: s.GetTournament(apb.GetTournamentRequest(tournament="9" * 30)),
        "tournament",
    ),
    "30-digit game id": (lambda s: s.GetGame(apb.GetGameRequest(game="9" * 30)), "game"),
    "game id 2^63": (lambda s: s.GetGame(apb.GetGameRequest(game=str(2**63))), "game"),
    "tournament id 2^64": (
        lambda s: s.GetTournament(apb.GetTournamentRequest(tournament=str(2**64))),
        "tournament",
    ),
    "listed tournament 2^63": (
        lambda s: s.ListGames(apb.ListGamesRequest(tournament=str(2**63))),
        "tournament",
    ),
    "presence of tournament 2^63": (
        lambda s: s.GetTournamentPresence(apb.GetTournamentRequest(tournament=str(2**63))),
        "tournament",
    ),
    "watched uid 2^63": (
        lambda s: _all(s.WatchGame(apb.WatchGameRequest(uid=str(2**63)))),
        "uid",
    ),
    "30-digit watched uid": (
        lambda s: _all(s.WatchGame(apb.WatchGameRequest(uid="9" * 30))),
        "uid",
    ),
    "negative limit": (lambda s: s.ListGames(apb.ListGamesRequest(limit=-1)), "limit"),
    "huge limit": (lambda s: s.ListGames(apb.ListGamesRequest(limit=2**31 - 1)), "limit"),
    "negative offset": (lambda s: s.ListGames(apb.ListGamesRequest(offset=-5)), "offset"),
    "100 kB bot name": (lambda s: s.ListGames(apb.ListGamesRequest(bot="x" * 100_000)), "bot"),
    "control character": (
        lambda s: s.GetTournament(apb.GetTournamentRequest(tournament="a\x1b[2J")),
        "tournament",
    ),
    "NaN anchor rating": (
        lambda s: s.GetLeaderboard(apb.GetLeaderboardRequest(anchor_rating=float("nan"))),
        "anchor_rating",
    ),
    "huge anchor rating": (
        lambda s: s.GetLeaderboard(apb.GetLeaderboardRequest(anchor_rating=1e300)),
        "anchor_rating",
    ),
    "long ladder name": (lambda s: s.GetLadder(apb.GetLadderRequest(ladder="l" * 500)), "ladder"),
}


def test_each_bad_arena_field_gets_invalid_argument_naming_it(tmp_path: Path) -> None:
    """Overflowing ids, negative or huge limits and offsets, over-long or control-character
    references and non-finite ratings are refused with INVALID_ARGUMENT naming the field."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    server = RefereeServer(services=[ArenaService(repo)])
    calls = {name: call for name, (call, _) in BAD_ARENA_CALLS.items()}
    out = asyncio.run(_codes(server, calls))
    for name, (_, field) in BAD_ARENA_CALLS.items():
        code, details = out[name]
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (name, code, details)
        assert details.startswith(f"{field}: "), (name, details)
        assert len(details) < 300, name


def test_unknown_ids_and_anchors_get_not_found(tmp_path: Path) -> None:
    """An unknown game, tournament or anchor is NOT_FOUND (an unknown anchor was UNKNOWN:
    KeyError); an id in range is looked up, not refused, and non-ASCII digits are a name."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    server = RefereeServer(services=[ArenaService(repo)])
    out = asyncio.run(
        _codes(
            server,
            {
                "anchor": lambda s: s.GetLeaderboard(apb.GetLeaderboardRequest(anchor="nobody")),
                "max id": lambda s: s.GetGame(apb.GetGameRequest(game=str(bounds.MAX_ID))),
                "arabic digits": lambda s: s.GetTournament(
                    apb.GetTournamentRequest(tournament="\u0661\u0662")
                ),
                "limit at bound": lambda s: s.ListGames(
                    apb.ListGamesRequest(limit=bounds.MAX_LIST_LIMIT)
                ),
            },
        )
    )
    assert out["anchor"][0] == grpc.StatusCode.NOT_FOUND
    assert out["anchor"][1] == "anchor: no bot 'nobody' in this table"
    assert out["max id"] == (grpc.StatusCode.NOT_FOUND, f"no game {bounds.MAX_ID}")
    assert out["arabic digits"] == (grpc.StatusCode.NOT_FOUND, "no tournament '\u0661\u0662'")
    assert out["limit at bound"] == ("OK", "")


def test_live_only_arena_bounds_the_watched_uid() -> None:
    """The database-less Arena refuses an over-long uid by name and keeps its NOT_FOUND."""
    server = RefereeServer(services=[LiveArenaService(LiveHub())])
    out = asyncio.run(
        _codes(
            server,
            {
                "long": lambda s: _all(s.WatchGame(apb.WatchGameRequest(uid="u" * 10_000))),
                "unknown": lambda s: _all(s.WatchGame(apb.WatchGameRequest(uid="nope"))),
            },
        )
    )
    assert out["long"][0] == grpc.StatusCode.INVALID_ARGUMENT
    assert out["long"][1].startswith("uid: 10000 characters")
    assert out["unknown"][0] == grpc.StatusCode.NOT_FOUND


def test_an_unexpected_failure_is_internal_with_a_neutral_message(tmp_path: Path) -> None:
    """A storage failure inside a handler (the games table gone) reaches the client as
    INTERNAL naming an incident, never as UNKNOWN with the exception's type; the server logs
    the exception under that incident and keeps serving."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    with sqlite3.connect(db) as raw:
        raw.execute("DROP TABLE game_seats")
        raw.execute("DROP TABLE games")
    server = RefereeServer(services=[ArenaService(repo)])
    logged_to = io.StringIO()
    logs.configure("json", stream=logged_to)
    try:
        out = asyncio.run(
            _codes(
                server,
                {
                    "broken": lambda s: s.ListGames(apb.ListGamesRequest()),
                    "after": lambda s: s.ListLiveGames(apb.ListLiveGamesRequest()),
                },
            )
        )
    finally:
        logs.configure("console")
    code, details = out["broken"]
    assert code == grpc.StatusCode.INTERNAL
    assert details.startswith("the server failed on this request (incident ")
    for leak in ("Error", "sqlite", "Traceback", "table"):
        assert leak not in details
    incident = details.split("incident ", 1)[1].split(")", 1)[0]
    logged = logged_to.getvalue()
    assert "rpc_failed" in logged and incident in logged and "no such table" in logged
    assert out["after"] == ("OK", "")


def test_undecodable_request_bytes_are_invalid_argument(tmp_path: Path) -> None:
    """Bytes that are not the method's message are INVALID_ARGUMENT (they were UNKNOWN:
    DecodeError), for a unary and a server-streaming method."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    server = RefereeServer(services=[ArenaService(repo)])

    async def main() -> list[Any]:
        address = await server.start("127.0.0.1:0")
        codes = []
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                for method, kind in (("GetGame", "unary_unary"), ("WatchGame", "unary_stream")):
                    call = getattr(channel, kind)(f"/tetromino.referee.v1.Arena/{method}")
                    try:
                        result = call(b"\xff\xff\xff\x07")
                        if kind == "unary_stream":
                            _ = [m async for m in result]
                        else:
                            await result
                        codes.append("OK")
                    except grpc.aio.AioRpcError as exc:
                        codes.append((exc.code(), exc.details()))
        finally:
            await server.stop(0)
        return codes

    for code, details in asyncio.run(main()):
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "not a valid message" in details


def test_bad_submissions_fields_get_invalid_argument_naming_them(tmp_path: Path) -> None:
    """An upload's bot name outside the name rules and an over-long game id are refused with
    INVALID_ARGUMENT naming the field, before anything is stored or looked up."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("alice")
    token = repo.issue_token("alice")
    uploads = SubmissionService(
        Submissions(repo, SubmissionStore(tmp_path / "store")), validate=False
    )
    server = RefereeServer(services=[uploads])

    async def main() -> dict[str, tuple[Any, str]]:
        address = await server.start("127.0.0.1:0")
        out: dict[str, tuple[Any, str]] = {}
        metadata = (("authorization", f"Bearer {token}"),)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = submissions_pb2_grpc.SubmissionsStub(channel)
                bad_name = spb.SubmitRequest(start=spb.SubmitStart(bot_name="../evil\x1b[2J"))
                calls: dict[str, Any] = {
                    "name": lambda: _all(stub.Submit(iter([bad_name]), metadata=metadata)),
                    "long id": lambda: stub.GetMyOutput(
                        spb.GetMyOutputRequest(game_id="g" * 5000), metadata=metadata
                    ),
                    "unknown id": lambda: stub.GetMyOutput(
                        spb.GetMyOutputRequest(game_id="nope"), metadata=metadata
                    ),
                    "game 2^63": lambda: stub.GetMyGame(
                        spb.GetMyGameRequest(game_id=str(2**63)), metadata=metadata
                    ),
                    "output 2^63": lambda: stub.GetMyOutput(
                        spb.GetMyOutputRequest(game_id=str(2**63)), metadata=metadata
                    ),
                    "pack 2^64": lambda: stub.GetMyFailurePack(
                        spb.GetMyOutputRequest(game_id=str(2**64)), metadata=metadata
                    ),
                }
                for name, call in calls.items():
                    try:
                        await call()
                        out[name] = ("OK", "")
                    except grpc.aio.AioRpcError as exc:
                        out[name] = (exc.code(), exc.details() or "")
        finally:
            await server.stop(0)
        return out

    out = asyncio.run(main())
    assert out["name"][0] == grpc.StatusCode.INVALID_ARGUMENT
    assert out["name"][1].startswith("SubmitStart.bot_name: '../evil")
    assert "\x1b" not in out["name"][1]
    assert out["long id"][0] == grpc.StatusCode.INVALID_ARGUMENT
    assert out["long id"][1].startswith("game_id: 5000 characters")
    assert out["unknown id"][0] == grpc.StatusCode.NOT_FOUND
    for past_the_range in ("game 2^63", "output 2^63", "pack 2^64"):
        code, details = out[past_the_range]
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (past_the_range, code, details)
        assert details.startswith("game_id: id '"), details
    assert rows.list_submissions(repo.db) == []
