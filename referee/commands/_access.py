"""``referee serve``'s options on who may get in: one session per token and bot name, the cap
on logins in progress, and the shared token gate of the Play, Arena and Submissions doors."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.hosting.presence import PresenceDesk
    from referee.live.hub import LiveHub
    from referee.rpc.arena import ArenaService
    from referee.server.access import Gate
    from referee.server.admission import Doorway
    from referee.server.auth import Authenticator
    from referee.storage import Repository


def add_access_options(parser: argparse.ArgumentParser) -> None:
    from referee.server.capacity import DEFAULT_MAX_HANDSHAKES, DEFAULT_MAX_HANDSHAKES_PER_ADDRESS

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


def server_doorway(max_logins: tuple[int, int]) -> Doorway:
    """How many logins may be in progress at once (``--max-logins``: in all, per address)."""
    from referee.server.admission import Doorway

    total, per_address = max_logins
    return Doorway(max(1, total), max(1, per_address))


def stored_doors(
    repo: Repository, hub: LiveHub, presence: PresenceDesk
) -> tuple[Authenticator, Gate, ArenaService]:
    """The Play authenticator, the token gate and the Arena service over the stored tokens of
    ``repo`` (remote entries' presence read from ``presence``): one
    :class:`~referee.server.access.Gate` for every door (the uploads service takes it too),
    so a client's failed logins count at every door."""
    from referee.rpc.arena import ArenaService
    from referee.server.access import Gate
    from referee.server.auth import LaunchTokens
    from referee.server.storedauth import StoredTokenAuth

    gate = Gate(repo)
    # Launched tournament bots connect here too, each with a one-game token.
    auth = LaunchTokens(StoredTokenAuth(repo, gate))
    return auth, gate, ArenaService(repo, hub, gate=gate, presence=presence)
