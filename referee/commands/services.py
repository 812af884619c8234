"""The services ``referee serve`` and ``referee worker`` run, built once from their typed
configuration (``referee serve``'s :class:`~referee.commands._serve_config.ServeConfig`).

What is built (the token gate, the live hub, the repository, the Arena and Submissions
services, the casual games' recorder) lives in one typed value handed to each step of
start-up beside the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.commands._ops import OpsAddresses

if TYPE_CHECKING:
    from engine.game import Game
    from referee.commands._serve_config import ServeConfig
    from referee.hosting.casual import CasualRecorder
    from referee.hosting.presence import PresenceDesk
    from referee.live.hub import LiveHub
    from referee.match.clock import TimeControl
    from referee.rpc.arena import ArenaService
    from referee.rpc.live_arena import LiveArenaService
    from referee.rpc.uploads import SubmissionService
    from referee.server.access import Gate
    from referee.server.app import Service, TlsFiles
    from referee.server.auth import Authenticator
    from referee.server.lobby import Lobby
    from referee.storage import Repository
    from referee.workers.worker import WorkerOptions


@dataclass(slots=True)
class ServeServices:
    """Everything ``referee serve`` built before listening."""

    #: The games offered (``Game[Any]``: each game has its own state type).
    games: list[Game[Any]]
    control: TimeControl
    memory_bytes: int
    #: The game casual pairing gives a bot that asks for none.
    default_game: str
    listen: list[str]
    auth: Authenticator
    tls: TlsFiles | None
    #: One hub: the Arena service, the web front and the matchmaker's games share it.
    hub: LiveHub
    #: The server's sessions, made before it: the presence desk reads them too.
    lobby: Lobby
    #: Where the tournaments the server runs put their remote entries' presence, for the
    #: Arena service (which also asks it about a tournament not started yet).
    presence: PresenceDesk
    ops: OpsAddresses = field(default_factory=OpsAddresses)
    #: With ``--db``: the repository and the token gate every door shares.
    repo: Repository | None = None
    gate: Gate | None = None
    read: ArenaService | LiveArenaService | None = None
    #: With ``--submissions``: the upload service (its validations resume at start).
    uploads: SubmissionService | None = None
    #: With ``--db``: stores the matchmaker's games and refreshes the ladders.
    recorder: CasualRecorder | None = None

    @property
    def grpc_services(self) -> list[Service]:
        """The services served beside the Play service, on the same port."""
        found: list[Service | None] = [self.read, self.uploads]
        return [s for s in found if s is not None]


@dataclass(frozen=True, slots=True)
class WorkerServices:
    """Everything ``referee worker`` runs: the worker itself and its operations endpoints."""

    options: WorkerOptions
    ops: OpsAddresses


def build_serve_services(config: ServeConfig) -> ServeServices:
    """What the server runs, built from ``config`` (``ValueError`` and the like when the
    options do not fit together, before anything listens)."""
    from engine.registry import game_names
    from referee.commands._access import stored_doors
    from referee.commands._common import load_game_option
    from referee.commands._dbopen import open_repository
    from referee.commands._uploads import build_service
    from referee.hosting.presence import PresenceDesk
    from referee.live.hub import LiveHub
    from referee.server.address import DEFAULT_ADDRESS, with_port
    from referee.server.auth import OpenAuth, TokenTable, read_token_file
    from referee.server.lobby import Lobby

    names = list(config.games) or game_names()
    games = [load_game_option(name, config.params if config.games else {}) for name in names]
    control = config.time_control
    tokens = config.tokens
    auth: Authenticator = TokenTable(read_token_file(tokens)) if tokens else OpenAuth()
    lobby = Lobby()
    services = ServeServices(
        games=games,
        control=control,
        memory_bytes=int(config.memory_mb * 1024 * 1024),
        default_game=_default_game(config.default_game, [g.name for g in games]),
        listen=[with_port(a) for a in config.listen or [DEFAULT_ADDRESS]],
        auth=auth,
        tls=config.tls.files(),
        hub=LiveHub(),
        lobby=lobby,
        presence=PresenceDesk(lobby, config.remote_timeout or None),
        ops=OpsAddresses(config.metrics_listen),
    )
    if config.db:
        if config.tokens:
            raise ValueError("--tokens and --db are two sources of tokens: give one")
        from referee.hosting.casual import CasualRecorder

        repo = services.repo = open_repository(config.db, create=config.create)
        services.auth, services.gate, services.read = stored_doors(
            repo, services.hub, services.presence
        )
        services.recorder = CasualRecorder(repo, rate_channels=config.rate_channels)
        services.uploads = build_service(
            config.uploads,
            repo,
            services.gate,
            control,
            config.memory_mb,
            in_process=config.in_process,
        )
    elif config.uploads.store:
        raise ValueError("--submissions needs --db (versions are kept in the database)")
    else:
        from referee.rpc.live_arena import LiveArenaService

        # Spectators still see the live games (referee watch --server); nothing is stored.
        services.read = LiveArenaService(services.hub)
    return services


def _default_game(asked: str | None, offered: list[str]) -> str:
    """The game casual pairing gives bots that ask for none; ``ValueError`` if not offered."""
    from referee.server.app import default_game_of

    game = (asked or default_game_of(offered)).lower()
    if game not in offered:
        raise ValueError(
            f"--default-game {game}: not among the games offered ({', '.join(offered)})"
        )
    return game
