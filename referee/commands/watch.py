"""``referee watch``: follow a game move by move through the Arena service (spectators)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from referee.commands._arena import fail
from referee.commands._common import Subparsers, verdict_label
from referee.commands._safe import esc
from referee.text.names import display

if TYPE_CHECKING:
    import grpc
    from rich.console import Console

    from client_sdk.proto import arena_pb2
    from engine.game import Game


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "watch",
        help="follow a live game move by move (Arena service)",
        description=(
            "Connect to a referee (referee serve, or referee tournament run --listen ADDR) and "
            "print a game's moves as they are played: casual, ladder and tournament games. "
            "--list: the live games. Without GAME: the first game being played (waiting for "
            "one). A finished game is replayed from storage (servers with --db)."
        ),
    )
    parser.add_argument("game", nargs="?", help="the game's uid (see ListLiveGames / games)")
    parser.add_argument("--server", default="127.0.0.1:50051", help="default %(default)s")
    parser.add_argument("--board", action="store_true", help="show the board after each move")
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the live games (casual, ladder and tournament) and exit",
    )
    parser.add_argument(
        "--wait", type=float, default=60.0, metavar="S", help="how long to wait for a live game"
    )
    from client_sdk.tls import tls_options

    tls_options(parser)
    parser.set_defaults(func=run)


def _channel(args: argparse.Namespace) -> grpc.Channel:
    """A channel to the server: TLS (verified, optionally with a client certificate) with
    ``--tls``; a file that cannot be read is a ``TlsSetupError`` naming it."""
    import grpc

    from client_sdk.tls import tls_of

    tls = tls_of(args)
    if tls is None:
        return grpc.insecure_channel(args.server)
    return grpc.secure_channel(args.server, tls.credentials())


def run(args: argparse.Namespace) -> int:
    import time

    import grpc

    from client_sdk.proto import arena_pb2 as apb
    from client_sdk.proto import arena_pb2_grpc
    from client_sdk.tls import TlsSetupError
    from referee.commands._arena import console

    out = console()
    try:
        channel = _channel(args)
    except TlsSetupError as exc:
        return fail("watch", str(exc), 2)
    with channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        uid = args.game
        try:
            if args.list:
                return _list(out, arena.ListLiveGames(apb.ListLiveGamesRequest(), timeout=10))
            deadline = time.monotonic() + args.wait
            while not uid:
                live = arena.ListLiveGames(apb.ListLiveGamesRequest(), timeout=10)
                if live.games:
                    uid = live.games[0].uid
                elif time.monotonic() > deadline:
                    return fail("watch", f"no live game on {args.server} within {args.wait:g} s", 1)
                else:
                    time.sleep(0.1)
            _follow(out, arena.WatchGame(apb.WatchGameRequest(uid=uid)), args.board)
        except grpc.RpcError as exc:
            from client_sdk.tls import handshake_failure, tls_of

            unavailable = exc.code() == grpc.StatusCode.UNAVAILABLE
            why = handshake_failure(tls_of(args), args.server) if unavailable else None
            return fail("watch", why or f"{exc.code().name}: {exc.details()}", 1)
    return 0


def _follow(out: Console, events: Iterable[arena_pb2.GameEvent], board: bool) -> None:
    from engine.adjudication import ply_number

    """Print a watched game's events as they come: its start, each move, its end."""
    game: Game[Any] | None = None
    seat_names: list[str] = []
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "start":
            seat_names = list(event.start.seat_names)
            players = "  ".join(
                f"{esc(s)}: {esc(p)}" for s, p in zip(seat_names, event.start.players, strict=False)
            )
            start = event.start
            out.print(f"[bold]{esc(start.game)}[/bold] game {esc(start.uid)}  {players}")
            if board:
                from engine.registry import load_game

                game = load_game(event.start.game)
        elif kind == "move":
            m = event.move
            who = seat_names[m.seat] if m.seat < len(seat_names) else str(m.seat)
            line = f"{ply_number(m.ply):>4}. {esc(who):<8} {esc(m.action)}"
            out.print(f"{line}  [dim]{m.time_s:.3f} s[/dim]")
            if game is not None:
                from rich.text import Text

                state = game.state_from_string(m.position)
                out.print(Text.from_ansi(state.render(color=out.is_terminal)))
        elif kind == "end":
            e = event.end
            label = verdict_label(e.verdict, e.termination)
            reason = esc(e.reason, 1000)
            out.print(f"[bold]{esc(e.result)}[/bold] ({esc(label)}) {reason}")


def _list(out: Console, live: arena_pb2.ListLiveGamesResponse) -> int:
    """One line per live game: its id, game, mode, players and moves so far."""
    if not live.games:
        out.print("no live games")
    for g in live.games:
        mode = g.mode or ("tournament" if g.tournament_id else "casual")
        if g.tournament_id:
            mode += f" {g.tournament_id}"
        players = " vs ".join(display(p) for p in g.players)
        line = f"{display(g.uid)}  {display(g.game):<8} {display(mode):<14} {players}"
        out.print(f"{line}  ({g.plies} moves)", markup=False, highlight=False)
    return 0
