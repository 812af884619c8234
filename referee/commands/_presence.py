"""``referee tournament presence NAME --server HOST:PORT``: where each remote entry of a
tournament is on the server that runs it (connected, waiting, missing), with the stated wait,
through the Arena service's ``GetTournamentPresence``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from referee.commands._arena import fail
from referee.commands._common import Subparsers, stored_ref

if TYPE_CHECKING:
    from client_sdk.proto import arena_pb2


def register_presence(sub: Subparsers) -> None:
    presence = sub.add_parser(
        "presence",
        help="which remote entries are connected, waiting or missing (asks the server)",
        description=(
            "Ask the referee that runs the tournament (referee serve, or referee tournament "
            "run --listen ADDR) where each remote entry's bot is: connected; waiting (a game "
            "waits for it, at most the stated wait); or missing (not connected: its games "
            "forfeit after the wait). Before the tournament starts, referee serve --db says "
            "which entries are connected already."
        ),
    )
    presence.add_argument("name", type=stored_ref, help="tournament name or id")
    presence.add_argument("--server", default="127.0.0.1:50051", help="default %(default)s")
    presence.add_argument("--json", action="store_true", help="print the answer as JSON")
    presence.set_defaults(func=_presence)


def describe(entry: arena_pb2.EntryPresence, wait_s: float, running: bool) -> str:
    """One entry's line, e.g. ``alice-bot@1  alice  --name alice-bot  connected``."""
    state = entry.state
    if state == "waiting":
        state += f" (a game waits for it, up to {wait_s:g} s)" if wait_s else " (a game waits)"
    elif state == "missing":
        then = "its games forfeit" if running else "once the tournament runs, its games forfeit"
        state += f" (not connected; {then} after {wait_s:g} s each)" if wait_s else ""
    elif state == "unknown":
        state += " (this server does not run the tournament)"
    return f"{entry.bot}  {entry.owner}  --name {entry.hello_name}  {state}"


def _presence(args: argparse.Namespace) -> int:
    import grpc
    from google.protobuf.json_format import MessageToDict

    from client_sdk.proto import arena_pb2 as apb
    from client_sdk.proto import arena_pb2_grpc

    try:
        with grpc.insecure_channel(args.server) as channel:
            reply = arena_pb2_grpc.ArenaStub(channel).GetTournamentPresence(
                apb.GetTournamentRequest(tournament=str(args.name)), timeout=10
            )
    except grpc.RpcError as exc:
        code = exc.code()
        if code is grpc.StatusCode.UNAVAILABLE:
            return fail("tournament presence", f"no referee answers at {args.server}", 2)
        return fail("tournament presence", f"{code.name}: {exc.details()}", 2)
    if args.json:
        print(json.dumps(MessageToDict(reply, always_print_fields_with_no_presence=True)))
        return 0
    how = "running on" if reply.running else f"{reply.status}, not running yet on"
    wait = f"; a game waits up to {reply.wait_s:g} s for a remote entry" if reply.wait_s else ""
    print(f"tournament {reply.tournament} ({how} {args.server}){wait}")
    if not reply.entries:
        print("no remote entries")
    for entry in reply.entries:
        print(describe(entry, reply.wait_s, reply.running))
    return 0
