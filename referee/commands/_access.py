"""``referee serve``'s options on who may get in: one session per token and bot name, the cap
on logins in progress, and the shared token gate of the Play, Arena and Submissions doors."""

from __future__ import annotations

import argparse
from typing import Any


def add_access_options(parser: argparse.ArgumentParser) -> None:
    from referee.server.admission import (
        DEFAULT_MAX_HANDSHAKES,
        DEFAULT_MAX_HANDSHAKES_PER_ADDRESS,
    )

    parser.add_argument(
        "--allow-duplicate-sessions",
        action="store_true",
        help="let one token run several sessions of the same bot name at once (default: a "
        "second one is refused unless it presents the first one's session id, which it "
        "then replaces)",
    )
    parser.add_argument(
        "--max-logins",
        type=int,
        nargs=2,
        default=(DEFAULT_MAX_HANDSHAKES, DEFAULT_MAX_HANDSHAKES_PER_ADDRESS),
        metavar=("ALL", "PER_ADDRESS"),
        help="logins (streams not yet past their token check) in progress at once, in all and "
        "from one address; more are told to retry in 1 s (default %(default)s)",
    )


def server_access(args: argparse.Namespace) -> dict[str, Any]:
    """The ``RefereeServer`` keyword arguments these options give."""
    from referee.server.admission import Doorway

    total, per_address = args.max_logins
    return {
        "doorway": Doorway(max(1, total), max(1, per_address)),
        "allow_duplicate_sessions": args.allow_duplicate_sessions,
    }


def stored_doors(args: argparse.Namespace, repo: Any) -> tuple[Any, Any]:
    """The Play authenticator and the Arena service over the stored tokens of ``repo``,
    sharing one :class:`~referee.server.access.Gate` (kept as ``args.gate`` for the uploads
    service): a client's failed logins count at every door."""
    from referee.hosting.arena import ArenaService
    from referee.server.access import Gate
    from referee.server.auth import LaunchTokens
    from referee.server.storedauth import StoredTokenAuth

    args.gate = Gate(repo)
    # Launched tournament bots connect here too, each with a one-game token.
    auth = LaunchTokens(StoredTokenAuth(repo, args.gate))
    return auth, ArenaService(repo, args.live_hub, gate=args.gate)
