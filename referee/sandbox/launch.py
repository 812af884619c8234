"""Starting bots as subprocesses, keeping their output, and always cleaning them up.

A bot is given as a :class:`~referee.sandbox.bots.BotSpec` (a package, file or SDK module run
through the SDK's runner, or a shell command: :func:`~referee.sandbox.bots.parse_bot_spec`).

Each bot runs under the sandbox supervisor (:class:`referee.sandbox.BotProcess`): its own
session and process group, stdin closed, ``RLIMIT_DATA`` set from its memory limit, its whole
process tree's resident memory polled (and a memory cgroup where the machine offers one), its
stdout and stderr kept in one bounded capture, never in the referee's own output, and every
process it started cleaned up when it is stopped (see docs/limits.md).

With ``Isolation.BWRAP`` (the default wherever :func:`referee.sandbox.isolation.probe` finds
the sandbox working) the bot also runs contained (:mod:`referee.sandbox.jail`, see
docs/sandbox.md): it reaches the referee only through the ``unix:`` address it is given, which
is mounted into its sandbox, and reads its token from a file there. With ``Isolation.NONE`` it
runs as a plain process with a filtered environment and its token in an owner-only file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path

from referee.sandbox import DEFAULT_MAX_TASKS, BotProcess, priority
from referee.sandbox.bots import DEFAULT_MEMORY_MB as DEFAULT_MEMORY_MB
from referee.sandbox.bots import OUTPUT_LIMIT_BYTES as OUTPUT_LIMIT_BYTES
from referee.sandbox.bots import BotSpec as BotSpec
from referee.sandbox.bots import LaunchedBot as LaunchedBot
from referee.sandbox.bots import OutputView as OutputView
from referee.sandbox.bots import parse_bot_spec as parse_bot_spec
from referee.sandbox.isolation import Isolation, choose
from referee.sandbox.jail import DEFAULT_SCRATCH_MB, build_jail
from referee.sandbox.leftovers import run_folder
from referee.telemetry.logs import get_logger
from referee.telemetry.metrics import launch_timer

log = get_logger("referee.sandbox.launch")


async def launch(
    spec: BotSpec,
    server: str,
    token: str,
    *,
    memory_mb: float | None = DEFAULT_MEMORY_MB,
    cwd: str | None = None,
    poll_interval: float = 0.02,
    output_limit: int = OUTPUT_LIMIT_BYTES,
    max_tasks: int | None = DEFAULT_MAX_TASKS,
    isolation: Isolation | None = None,
    scratch_mb: int = DEFAULT_SCRATCH_MB,
    exclude: Sequence[Path] = (),
    extra_env: dict[str, str] | None = None,
) -> LaunchedBot:
    """Start ``spec`` connecting to ``server`` with ``token``, under a ``memory_mb`` limit
    (``None`` or 0: measured, not limited) and, where a ``pids`` cgroup can enforce it, at
    most ``max_tasks`` processes and threads. ``extra_env`` adds to its environment (e.g. the
    load check's ``TETROMINO_LOAD_CHECK=1``, which needs no ``server``).

    ``isolation`` (default: the sandbox where it works here, see
    :func:`referee.sandbox.isolation.choose`) says how it is contained; sandboxed, ``server``
    must be a ``unix:PATH`` address, the bot's code is copied for this game (never from the
    folders in ``exclude``, e.g. the opponent's) and it gets ``scratch_mb`` of scratch space.
    """
    isolation = choose() if isolation is None else isolation
    # Every launched bot gets a seed, recorded with its game (and failure pack), so that a
    # replay gives it the same one.
    seed = secrets.randbelow(2**31)
    extra_env = {"TETROMINO_SEED": str(seed), **(extra_env or {})}
    with launch_timer(isolation.value):
        if isolation is Isolation.BWRAP:
            bot = await _launch_jailed(
                spec,
                server,
                token,
                memory_mb,
                poll_interval,
                output_limit,
                max_tasks,
                scratch_mb,
                exclude,
                extra_env,
            )
        else:
            bot = await _launch_plain(
                spec,
                server,
                token,
                memory_mb,
                cwd,
                poll_interval,
                output_limit,
                max_tasks,
                extra_env,
            )
    given = extra_env["TETROMINO_SEED"]
    bot.seed = int(given) if given.isdigit() else None
    return bot


async def _launch_plain(
    spec: BotSpec,
    server: str,
    token: str,
    memory_mb: float | None,
    cwd: str | None,
    poll_interval: float,
    output_limit: int,
    max_tasks: int | None,
    extra_env: dict[str, str],
) -> LaunchedBot:
    env, token_dir = _plain_environment(token, server, memory_mb)
    env.update(extra_env)
    argv = spec.argv(server, token, token_file=f"{token_dir}/token")
    try:
        proc = await BotProcess.start(
            argv,
            env=env,
            cwd=cwd,
            memory_limit_mb=memory_mb or None,
            stderr_limit_bytes=output_limit,
            poll_interval_s=poll_interval,
            stdout="capture",
            max_tasks=max_tasks,
            niceness=priority.launch_niceness(),
            cpu_class=priority.launch_class(),
        )
    except BaseException:
        shutil.rmtree(token_dir, ignore_errors=True)
        raise
    bot = LaunchedBot(spec, proc, token, Isolation.NONE, token_dir=token_dir)
    log.debug("launched", bot=spec.label, pid=proc.pid, isolation="none", argv=argv)
    return bot


async def _launch_jailed(
    spec: BotSpec,
    server: str,
    token: str,
    memory_mb: float | None,
    poll_interval: float,
    output_limit: int,
    max_tasks: int | None,
    scratch_mb: int,
    exclude: Sequence[Path],
    extra_env: dict[str, str],
) -> LaunchedBot:
    if server and not server.startswith("unix:"):
        raise ValueError(
            f"a sandboxed bot reaches the referee only through a unix: socket, not {server!r}"
        )
    if "TETROMINO_LOAD_CHECK" not in extra_env:  # a load check always starts cold
        limits = (memory_mb, scratch_mb, max_tasks, poll_interval, output_limit)
        served = await _launch_warm(spec, server, token, limits, exclude, extra_env)
        if served is not None:
            return served
    jail = build_jail(
        spec.kind,
        spec.value,
        socket_path=server.removeprefix("unix:"),
        token=token,
        memory_mb=memory_mb,
        scratch_mb=scratch_mb,
        exclude=exclude,
    )
    try:
        proc = await BotProcess.start(
            jail.argv,
            env={**jail.env, **extra_env},
            cwd="/",
            memory_limit_mb=memory_mb or None,
            stderr_limit_bytes=output_limit,
            poll_interval_s=poll_interval,
            stdout="capture",
            max_tasks=max_tasks,
            pass_fds=jail.pass_fds,
            wrapped=True,
            run_as=jail.run_as,
            niceness=priority.launch_niceness(),
            cpu_class=priority.launch_class(),
        )
    except BaseException:
        jail.remove()
        raise
    jail.close_fds()
    bot = LaunchedBot(spec, proc, token, Isolation.BWRAP, jail=jail)
    facts = {"uid": jail.run_as.uid if jail.run_as else None, "copied": jail.code.copied}
    log.debug("launched", bot=spec.label, pid=proc.pid, isolation="bwrap", **facts)
    return bot


async def _launch_warm(
    spec: BotSpec,
    server: str,
    token: str,
    limits: tuple[float | None, int, int | None, float, int],
    exclude: Sequence[Path],
    game_env: dict[str, str],
) -> LaunchedBot | None:
    """The bot in a warm sandbox with these limits, if the pool holds one (else ``None``), at
    the CPU priority of the kind of game it plays (priority.py: background work runs lower)."""
    from referee.sandbox import warm

    terms = warm.WarmTerms(*limits)
    niceness = priority.launch_niceness()
    served = await warm.launch_warm(
        spec, server, token, terms, exclude, game_env, niceness, priority.launch_class()
    )
    if served is not None:
        log.debug("launched", bot=spec.label, pid=served.pid, isolation="bwrap", warm=True)
    return served


#: Variables an uncontained bot keeps from the referee's environment (no secrets).
_PLAIN_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TERM", "TMPDIR", "VIRTUAL_ENV", "USER")


def _plain_environment(
    token: str, server: str, memory_mb: float | None
) -> tuple[dict[str, str], str]:
    """An uncontained bot's environment (an allow-list) and a private folder with its token."""
    env = {name: os.environ[name] for name in _PLAIN_ENV if name in os.environ}
    token_dir = str(run_folder("arena-token-"))  # mode 0700, named for this process
    with open(os.open(f"{token_dir}/token", os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
        handle.write(token)
    env["TETROMINO_SERVER"] = server
    env["TETROMINO_TOKEN_FILE"] = f"{token_dir}/token"
    env["TETROMINO_SANDBOX"] = "none"
    env["PYTHONUNBUFFERED"] = "1"
    if memory_mb:
        env["TETROMINO_MEMORY_MB"] = f"{memory_mb:g}"
    # The bot must be able to import the SDK and engine from wherever it runs.
    root = str(Path(__file__).resolve().parents[2])
    inherited = os.environ.get("PYTHONPATH", "")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, inherited) if p)
    return env, token_dir


async def stop_all(bots: list[LaunchedBot], grace: float = 2.0) -> None:
    """Stop every bot, concurrently, whatever happens to the others."""
    with contextlib.suppress(Exception):
        await asyncio.gather(*(bot.stop(grace) for bot in bots), return_exceptions=True)
