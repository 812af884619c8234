"""One warm sandbox: started ahead of its game (:func:`start_sandbox`), then given that game's
code, socket, token and command line (:func:`hand_over`); the pool that holds them is
:mod:`referee.sandbox.warm`, whose docstring says what a warm sandbox is and what it keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import RefereeError
from referee.sandbox import DEFAULT_MAX_TASKS, BotProcess, jail, seccomp
from referee.sandbox.botcode import INSIDE, stage_code
from referee.sandbox.bots import (
    DEFAULT_MEMORY_MB,
    OUTPUT_LIMIT_BYTES,
    BotSpec,
    LaunchedBot,
)
from referee.sandbox.identity import HostIdentity, bot_uid
from referee.sandbox.isolation import Isolation
from referee.sandbox.memory import sample_tree
from referee.sandbox.priority import own_niceness
from referee.sandbox.venv import python_inside

#: Top-level modules a warm sandbox has imported before its game: a bot whose own code ships a
#: module of one of these names (which would shadow it in a cold launch) is launched cold.
WARM_PREIMPORTS = frozenset({"client_sdk", "engine", "referee", "grpc", "google", "numpy"})
RUN_INSIDE = str(Path(jail.SOCKET_INSIDE).parent)
#: The niceness a warm sandbox imports at (a root referee only, which restores its own for the
#: game): on a busy machine its start-up takes the CPU the running games leave, not theirs.
WARM_NICE = 10
#: Passes over a starting sandbox's threads to give them back the referee's niceness.
RESTORE_PASSES = 20


@dataclass(frozen=True, slots=True)
class WarmTerms:
    """The limits a sandbox is started with: a game takes only a sandbox with its own terms."""

    memory_mb: float | None = DEFAULT_MEMORY_MB
    scratch_mb: int = jail.DEFAULT_SCRATCH_MB
    max_tasks: int | None = DEFAULT_MAX_TASKS
    poll_interval: float = 0.02
    output_limit: int = OUTPUT_LIMIT_BYTES


@dataclass(eq=False)
class WarmSandbox:
    """One started, never-used sandbox waiting on its control pipe."""

    terms: WarmTerms
    proc: BotProcess
    folder: Path
    argv: list[str]
    env: dict[str, str]
    run_as: HostIdentity | None
    control: int
    #: Readable (one byte) once its Python has imported the platform.
    ready_fd: int
    started: float = field(default_factory=time.monotonic)
    _ready: bool = False

    def is_ready(self) -> bool:
        """Whether its Python has finished importing (and waits for its game)."""
        if not self._ready and self.ready_fd >= 0:
            with contextlib.suppress(BlockingIOError):
                self._ready = os.read(self.ready_fd, 1) == b"1"
        return self._ready

    async def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until it is ready (or has exited); whether it is ready."""
        async with asyncio.timeout(timeout):
            while not self.is_ready() and self.proc.running:
                await asyncio.sleep(0.005)
        return self._ready

    def close_fds(self) -> None:
        for fd in (self.control, self.ready_fd):
            with contextlib.suppress(OSError):
                if fd >= 0:
                    os.close(fd)
        self.control = self.ready_fd = -1

    async def discard(self) -> None:
        """Stop it unused: the pipe closes (its program exits), then the usual stop."""
        self.close_fds()
        try:
            await self.proc.stop(0.5)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


async def start_sandbox(terms: WarmTerms, numpy: bool = True) -> WarmSandbox:
    """Start a warm sandbox with ``terms``: its Python imports the platform (NumPy if asked)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-bot-"))
    uid = bot_uid()
    run_as = HostIdentity(uid) if uid is not None else None
    fds: list[int] = []
    control = ready_r = -1
    try:
        (folder / "code").mkdir()
        (folder / "run").mkdir()
        mounts = jail._mounts(run_as, folder, terms.scratch_mb)
        if run_as is not None:
            jail._give(folder, run_as.uid)
        seccomp_fd = jail._memory_file("arena-seccomp", seccomp.bpf_program())
        fds.append(seccomp_fd)
        reader, control = os.pipe()
        fds.append(reader)
        ready_r, ready_w = os.pipe()
        fds.append(ready_w)
        os.set_blocking(ready_r, False)
        args = [*jail._namespaces(), *mounts]
        args += ["--ro-bind", str(folder / "code"), INSIDE]
        args += ["--ro-bind", str(folder / "run"), RUN_INSIDE]
        args += ["--remount-ro", "/", "--seccomp", str(seccomp_fd), "--chdir", INSIDE]
        # As for a cold launch: bwrap reads its options from a memory file (the sandbox's pid
        # 1 names no host path) and the interpreter is the one inside (the venv at /opt/venv).
        args_fd = jail._memory_file("arena-bwrap-args", b"".join(a.encode() + b"\0" for a in args))
        fds.append(args_fd)
        argv = ["bwrap", "--args", str(args_fd), "--", python_inside()]
        argv += ["-m", "client_sdk._warm", str(reader), str(ready_w), *(["numpy"] if numpy else [])]
        env = jail._environment(terms.memory_mb, False)
        proc = await BotProcess.start(
            argv,
            env=env,
            cwd="/",
            memory_limit_mb=terms.memory_mb or None,
            stderr_limit_bytes=terms.output_limit,
            poll_interval_s=terms.poll_interval,
            stdout="capture",
            max_tasks=terms.max_tasks,
            pass_fds=tuple(fds),
            wrapped=True,
            run_as=run_as,
        )
    except BaseException:
        for end in (control, ready_r):
            if end >= 0:
                os.close(end)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    if run_as is not None:  # only root can give the priority back for the game
        # The shim is still starting: bwrap and the bot's Python inherit this niceness. (Should
        # the shim have forked already, its children simply keep the usual priority.)
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, proc.pid, WARM_NICE)
    return WarmSandbox(terms, proc, folder, argv, env, run_as, control, ready_r)


class NotServable(RefereeError):
    """This bot cannot be given this warm sandbox (it is discarded; the launch goes cold)."""


def hand_over(
    sandbox: WarmSandbox,
    spec: BotSpec,
    server: str,
    token: str,
    exclude: Sequence[Path],
    game_env: Mapping[str, str] | None = None,
    niceness: int | None = None,
    cpu_class: int = 0,
) -> LaunchedBot:
    """Give ``sandbox`` its game: the code copy, the socket, the token, the command line, the
    game's own variables (``game_env``, e.g. its ``TETROMINO_SEED``) and the CPU priority it
    plays at (``niceness``; ``None``: the referee's own; ``cpu_class`` > 0: a background
    class's ``cpu`` cgroup weight, see :mod:`referee.sandbox.cpuweight`)."""
    folder = sandbox.folder
    code = stage_code(spec.kind, spec.value, folder / "code", exclude)
    shipped = {Path(name).name.split(".", 1)[0] for name in os.listdir(folder / "code")}
    if shipped & WARM_PREIMPORTS:
        raise NotServable(f"the bot ships {sorted(shipped & WARM_PREIMPORTS)}")
    run = folder / "run"
    socket_path = server.removeprefix("unix:")
    os.chmod(socket_path, 0o666)  # as for a cold launch: only the private folder guards it
    try:
        os.link(socket_path, run / "referee.sock")
    except OSError as exc:
        raise NotServable(f"cannot link the referee socket: {exc}") from exc
    token_path = run / "token"
    with open(os.open(token_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400), "w") as handle:
        handle.write(token)
    if sandbox.run_as is not None:
        jail._give(folder, sandbox.run_as.uid)
    if sandbox.run_as is not None or niceness is not None:
        # A root referee started it at WARM_NICE; otherwise it runs at the referee's own and
        # only a background game's (higher) niceness needs setting.
        _give_priority(sandbox.proc.pid, own_niceness() if niceness is None else niceness)
    # Started before its game was known, in the referee's own cpu cgroup: moved now, before
    # its bot's code starts.
    sandbox.proc.lower_cpu(cpu_class)
    pythonpath = jail._environment(sandbox.terms.memory_mb, code.on_path)["PYTHONPATH"]
    args = jail.inner_argv(spec.kind, code.value)[3:]
    order = {"args": args, "pythonpath": pythonpath, "env": dict(game_env or {})}
    message = json.dumps(order).encode()
    try:
        os.write(sandbox.control, message)
    except OSError as exc:
        raise NotServable(f"the sandbox is gone: {exc}") from exc
    finally:
        sandbox.close_fds()
    sandbox.proc.started_at = time.monotonic()
    cage = jail.Jail(sandbox.argv, sandbox.env, (), folder, code, sandbox.run_as)
    return LaunchedBot(spec, sandbox.proc, token, Isolation.BWRAP, jail=cage, warm=True)


def _give_priority(root: int, niceness: int) -> None:
    """Every thread of the sandbox at the game's ``niceness`` (the priority a cold launch
    would have: the referee's own, 0 usually, 10 under ``nice -n 10 referee serve``, or a
    background game's, :mod:`referee.sandbox.priority`), before its bot's code starts.

    A sandbox handed over while still starting forks as this runs, and a process or thread
    forked from one not yet set inherits the import-time niceness: passes go on until one
    finds every thread already right (bounded; seen as a bot playing at 10 at load 20)."""
    for _ in range(RESTORE_PASSES):
        if not _priority_pass(root, niceness):
            return


def _priority_pass(root: int, niceness: int) -> bool:
    """One pass over the sandbox's threads; whether any had to be changed."""
    changed = False
    for pid in sample_tree(root, []).pids:
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    if os.getpriority(os.PRIO_PROCESS, int(task)) != niceness:
                        os.setpriority(os.PRIO_PROCESS, int(task), niceness)
                        changed = True
    return changed
