"""The services ``referee serve`` and ``referee worker`` run, built once from parsed options.

The options stay on the parsed ``Namespace``; what is built from them (the token gate, the
live hub, the repository, the Arena and Submissions services, the casual games' recorder)
lives in one typed value handed to each step of start-up, never on the ``Namespace``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.game import Game
    from referee.hosting.arena import ArenaService
    from referee.hosting.casual import CasualRecorder
    from referee.hosting.live_arena import LiveArenaService
    from referee.hosting.uploads import SubmissionService
    from referee.match.clock import TimeControl
    from referee.server.access import Gate
    from referee.server.app import Service, TlsFiles
    from referee.server.auth import Authenticator
    from referee.server.live import LiveHub
    from referee.storage import Repository
    from referee.workers.worker import WorkerOptions


@dataclass(frozen=True, slots=True)
class OpsAddresses:
    """Where the operations endpoints listen (``None``: not served)."""

    metrics: str | None = None
    health: str | None = None

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> OpsAddresses:
        # `referee serve` answers health on its gRPC port and has no --health-listen.
        return cls(args.metrics_listen, getattr(args, "health_listen", None))


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
