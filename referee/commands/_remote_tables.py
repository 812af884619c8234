"""``referee leaderboard --server HOST:PORT``: the tables of a running referee, through the
Arena service (``GetLeaderboard``, ``GetLadder``), one game at a time like the local ones."""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import TYPE_CHECKING

from referee.commands._arena import fail

if TYPE_CHECKING:
    from client_sdk.proto import arena_pb2


def remote_leaderboard(args: argparse.Namespace) -> int:
    """The Elo table (or with ``--ladder`` the ladder) of ``args.game`` from ``args.server``."""
    import grpc
    from google.protobuf.json_format import MessageToJson

    from client_sdk.proto import arena_pb2 as apb
    from client_sdk.proto import arena_pb2_grpc
    from referee.commands._arena import console, ladder_table, leaderboard_table, write_out

    local_only = [f"--{n}" for n in ("cross", "los", "anchors", "csv") if getattr(args, n)]
    if local_only or args.db:
        given = ", ".join(local_only + (["--db"] if args.db else []))
        return fail("leaderboard", f"{given}: not with --server (they read a database)")
    try:
        with grpc.insecure_channel(args.server) as channel:
            arena = arena_pb2_grpc.ArenaStub(channel)
            reply: arena_pb2.Ladder | arena_pb2.Leaderboard
            if args.ladder:
                reply = arena.GetLadder(
                    apb.GetLadderRequest(ladder=args.ladder, game=args.game or ""), timeout=30
                )
            else:
                request = apb.GetLeaderboardRequest(
                    tournament=args.tournament or "",
                    game=args.game or "",
                    anchor=args.anchor or "",
                    anchor_rating=args.anchor_rating,
                )
                reply = arena.GetLeaderboard(request, timeout=30)
    except grpc.RpcError as exc:
        if exc.code() is grpc.StatusCode.UNAVAILABLE:
            return fail("leaderboard", f"no referee answers at {args.server}")
        return fail("leaderboard", exc.details() or exc.code().name)
    if args.json:
        write_out(args.json, MessageToJson(reply) + "\n")
        return 0
    out = console()
    if isinstance(reply, apb.Ladder):
        rows = [SimpleNamespace(**_fields(r), player=r.bot) for r in reply.rows]
        title = f"Ladder {reply.ladder}, {reply.game} ({reply.games} games)"
        out.print(ladder_table(rows, title))  # type: ignore[arg-type]
        return 0
    board = SimpleNamespace(
        anchor=reply.anchor, games=reply.games, rows=[_elo_row(r) for r in reply.rows]
    )
    title = f"{reply.tournament} ({reply.game})" if reply.tournament else f"All {reply.game} games"
    out.print(leaderboard_table(SimpleNamespace(board=board), title))  # type: ignore[arg-type]
    return 0


def _fields(row: arena_pb2.LeaderboardRow | arena_pb2.LadderRow) -> dict[str, object]:
    return {f.name: getattr(row, f.name) for f in row.DESCRIPTOR.fields if f.name != "bot"}


def _elo_row(r: arena_pb2.LeaderboardRow) -> SimpleNamespace:
    """A LeaderboardRow shaped like the local table's rows."""
    return SimpleNamespace(
        **{
            **_fields(r),
            "forfeits": {f.verdict: f.count for f in r.forfeits},
            "player": r.bot,
            "elo": r.elo if r.has_elo else None,
            "ci95": r.ci95 if r.has_elo else None,
            "score_pct": r.score_pct if r.games else None,
            "group": r.group or 1,
            "provisional": r.provisional or None,
        }
    )
