"""Remote bots for the commands that play them (``tournament run``, ``sprt``): the referee
server they connect to, and waiting for them before the first game."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.hosting.presence import PresenceDesk
    from referee.live.hub import LiveHub
    from referee.play.seats import SeatFinder
    from referee.server.app import RefereeServer

from referee.storage import BotVersionInfo, Repository, SourceKind


async def start_referee(
    repo: Repository,
    game: str,
    listen: str | None,
    hub: LiveHub | None,
    who: str,
    private_socket: bool,
    presence: PresenceDesk | None = None,
) -> RefereeServer:
    """A referee server for ``game`` on ``listen`` (default 127.0.0.1:50051) taking launched
    bots' one-game tokens and the stored tokens, with the Arena service, and a private Unix
    socket for sandboxed launched bots when ``private_socket`` (``ValueError`` naming the
    address when it cannot listen; ``who`` is what should get its own address; the Arena
    service reads remote entries' presence from ``presence``)."""
    from referee.rpc.arena import ArenaService
    from referee.server.access import Gate
    from referee.server.address import DEFAULT_ADDRESS, with_port
    from referee.server.app import RefereeServer
    from referee.server.auth import LaunchTokens
    from referee.server.storedauth import StoredTokenAuth

    gate = Gate(repo)  # one gate: failed logins count at the Play and Arena doors alike
    server = RefereeServer(
        auth=LaunchTokens(StoredTokenAuth(repo, gate)),
        games=[game],
        services=[ArenaService(repo, hub, gate=gate, presence=presence)],
    )
    wanted = with_port(listen or DEFAULT_ADDRESS)
    try:
        address = await server.start(wanted, private_socket=private_socket)
    except (OSError, RuntimeError) as exc:
        await server.stop(0)
        # Most often: referee serve already listens there (the students' address).
        raise ValueError(
            f"cannot listen on {wanted} ({exc}); is referee serve running there? Give {who} "
            "its own address with --listen HOST:PORT"
        ) from None
    print(f"referee and Arena service listening on {address}", file=sys.stderr)
    return server


def remote_owners(repo: Repository, versions: Sequence[BotVersionInfo]) -> dict[int, str]:
    """Version id -> the name of the player whose token may play it, for the remote ones
    (``ValueError`` for a remote bot without an owner: nobody could connect it)."""
    owners = {}
    for v in versions:
        if v.source_kind is not SourceKind.REMOTE:
            continue
        if v.owner_id is None:
            raise ValueError(f"remote bot {v.label} has no owner: nobody's token can play it")
        owners[v.id] = repo.get_player(v.owner_id).name
    return owners


def connect_hint(address: str, owner: str, version: BotVersionInfo) -> str:
    """The command that connects remote ``version`` to ``address``."""
    return (
        f"python -m client_sdk --server {address} --token <{owner}'s token> "
        f"--name {version.location} BOT"
    )


async def wait_connected(
    seats: SeatFinder, versions: Sequence[BotVersionInfo], timeout: float | None
) -> list[BotVersionInfo]:
    """Wait until every remote version has a free session in the seat finder's lobby (the
    tournament's seat finding); the versions still missing after ``timeout`` seconds."""
    remote = [v for v in versions if v.source_kind is SourceKind.REMOTE]
    if not remote:
        return []
    found = await seats.take(
        [seats.remote(v) for v in remote], [timeout] * len(remote), [None] * len(remote)
    )
    seats.release([s for s in found if s is not None])
    return [v for v, s in zip(remote, found, strict=True) if s is None]
