"""``referee serve`` options for student uploads, and what they build (read from the typed
:class:`~referee.commands._serve_config.UploadConfig`): the Submissions service and the
ladder of submitted bots."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.game import Game
    from referee.commands._serve_config import ServeConfig, UploadConfig
    from referee.hosting.autoplay import SubmittedLadder
    from referee.hosting.casual import CasualRecorder
    from referee.live.hub import LiveHub
    from referee.match.clock import TimeControl
    from referee.rpc.uploads import SubmissionService
    from referee.server.access import Gate
    from referee.storage import Repository

from referee.commands._serve_config import LIMIT_OPTIONS
from referee.submissions.limits import DEFAULT_LADDER_GAMES_PER_HOUR, DEFAULT_LIMITS, MB


def add_upload_options(parser: argparse.ArgumentParser) -> None:
    d = DEFAULT_LIMITS
    group = parser.add_argument_group(
        "uploads", "students submit code with: python -m client_sdk submit (needs --db)"
    )
    group.add_argument(
        "--submissions",
        metavar="DIR",
        help="accept uploaded bots and keep their code in this store folder",
    )
    for option, field, in_mb, text in LIMIT_OPTIONS:
        default = getattr(d, field)
        group.add_argument(
            option,
            type=float if in_mb else int,
            default=default / MB if in_mb else default,
            metavar="MB" if in_mb else "N",
            help=f"{text} (default %(default){'g' if in_mb else 's'})",
        )
    group.add_argument(
        "--validation-game",
        default="tetress",
        metavar="NAME",
        help="the game a new version's validation plays (default %(default)s)",
    )
    _add_no_sandbox(parser, group)
    _add_game_options(group)


def _add_game_options(group: argparse._ArgumentGroup) -> None:
    """How many validation games run at once, and how often the server's ladder plays
    submitted bots against each other."""
    group.add_argument(
        "--validation-concurrency",
        type=int,
        default=1,
        metavar="N",
        help="full validations at once; on PostgreSQL with live `referee worker` processes, "
        "their validation jobs in flight (default %(default)s)",
    )
    group.add_argument(
        "--ladder-games-per-hour",
        type=float,
        default=DEFAULT_LADDER_GAMES_PER_HOUR,
        metavar="N",
        help="ladder games between submitted bots (latest accepted versions, launched in the "
        "sandbox) started per hour, in the default game (default %(default)g; 0: none)",
    )
    group.add_argument(
        "--ladder-concurrency",
        type=int,
        default=1,
        metavar="N",
        help="ladder games between submitted bots at once (default %(default)s)",
    )


def _add_no_sandbox(parser: argparse.ArgumentParser, group: argparse._ArgumentGroup) -> None:
    if not any(action.dest == "no_sandbox" for action in parser._actions):
        group.add_argument(
            "--no-sandbox",
            action="store_true",
            help="launch bots without the sandbox (with --submissions, also needs "
            "--allow-unsandboxed-uploads; see docs/sandbox.md)",
        )
    group.add_argument(
        "--allow-unsandboxed-uploads",
        action="store_true",
        help="run uploaded bots (validation, ladder) without the sandbox when --no-sandbox is "
        "given or the sandbox cannot run here: uploaded code is hostile, so only on a machine "
        "that holds nothing to protect",
    )


def build_service(
    uploads: UploadConfig,
    repo: Repository,
    gate: Gate,
    control: TimeControl,
    memory_mb: float,
    *,
    in_process: bool = False,
) -> SubmissionService | None:
    """The Submissions gRPC service for ``referee serve`` (``None`` without --submissions).
    On PostgreSQL (unless ``in_process``) validation runs on the workers while one is alive."""
    if not uploads.store:
        return None
    from referee.rpc.uploads import SubmissionService
    from referee.submissions.service import Submissions
    from referee.submissions.store import SubmissionStore
    from referee.submissions.validate import ValidationSettings

    validation = ValidationSettings(
        game=uploads.validation_game,
        game_params=uploads.validation_params,
        time_control=control,
        memory_mb=memory_mb or None,
        no_sandbox=uploads_uncontained(uploads.no_sandbox, uploads.allow_unsandboxed),
    )
    store = SubmissionStore(uploads.store)
    offload = None
    # The dialect, not the queue's own test: on SQLite the queue's library is never loaded.
    if not in_process and repo.db.dialect == "postgresql":
        from referee.workers.validationjob import QueuedValidation

        offload = QueuedValidation(repo, repo.db.url, str(store.root), validation)
    submissions = Submissions(
        repo,
        store,
        limits=uploads.limits,
        validation=validation,
        concurrency=uploads.validation_concurrency,
        offload=offload,
        warm_first_checks=True,
    )
    return SubmissionService(submissions, gate=gate)


def uploads_uncontained(no_sandbox: bool, allowed: bool) -> bool:
    """Whether uploaded bots run without the sandbox (``ValueError`` when they would but the
    operator did not pass --allow-unsandboxed-uploads, ``allowed``): uploads are untrusted
    code."""
    from referee.sandbox.isolation import Isolation, choose, probe

    if no_sandbox and not allowed:
        raise ValueError(
            "--submissions with --no-sandbox would run uploaded code, which is hostile, "
            "without the sandbox; drop --no-sandbox, or add --allow-unsandboxed-uploads"
        )
    if no_sandbox or choose(False) is not Isolation.NONE:
        return no_sandbox
    if not allowed:
        raise ValueError(
            f"--submissions needs the sandbox to validate uploads ({probe().line}); "
            "or pass --allow-unsandboxed-uploads to run uploads without it"
        )
    return True


def start_ladder(
    config: ServeConfig,
    repo: Repository | None,
    recorder: CasualRecorder | None,
    hub: LiveHub | None,
    game: Game[Any],
    control: TimeControl,
) -> tuple[SubmittedLadder, asyncio.Task[None]] | None:
    """``referee serve --submissions``: submitted bots play ladder games in the default game
    (the ladder and its task; ``None`` when off)."""
    uploads = config.uploads
    if not uploads.store or repo is None or recorder is None:
        return None
    if uploads.ladder_games_per_hour <= 0:
        return None
    from referee.hosting.autoplay import AutoplaySettings, SubmittedLadder
    from referee.workers.queue import is_postgres

    settings = AutoplaySettings(
        game=game,
        time_control=control,
        memory_mb=config.memory_mb or None,
        games_per_hour=uploads.ladder_games_per_hour,
        concurrency=max(1, uploads.ladder_concurrency),
        no_sandbox=uploads_uncontained(uploads.no_sandbox, uploads.allow_unsandboxed),
    )
    queue = None
    if not config.in_process and is_postgres(repo.db.url):
        # On PostgreSQL the ladder's games are played by `referee worker` processes (their
        # live moves reach the hub through the listener of the hosted tournaments' queue).
        from referee.workers.dispatch import QueueDispatcher

        queue = QueueDispatcher(repo, repo.db.url)
    ladder = SubmittedLadder(repo, settings, recorder, hub, queue)
    return ladder, asyncio.create_task(ladder.run())
