"""Warm sandboxes: a bot's sandbox started ahead of its game, so the game does not wait for
Python to start and import the platform.

A warm sandbox is the same sandbox a cold launch builds (:mod:`referee.sandbox.jail`): a fresh
host uid, its own memory and ``pids`` cgroups with the game's limits, bwrap's namespaces, the
seccomp filter, the same mounts. Two things differ, because bwrap's mounts are fixed when it
starts: the per-game folders ``code`` (seen at ``/bots``) and ``run`` (seen at ``/run/arena``)
are created empty, owned by the bot's uid, and bound before start; and the program is
``python -m client_sdk._warm``, which imports the SDK, gRPC, the rules and NumPy and then waits
on a pipe. When a game takes it, the referee copies the bot's code into ``code``, puts a link to
the game's socket and the one-game token (mode 0400) in ``run``, and writes the bot's command
line to the pipe: from then on it runs exactly what a cold launch runs.

No bot code has run in a warm sandbox before its game, and a sandbox serves one game: it is
stopped and its folder removed with the game, like a cold one. The pool only ever holds
never-used sandboxes, so nothing a bot does (files in ``/tmp``, modules in ``sys.modules``, a
patched standard library) can reach another game.

The pool costs nothing when idle: it holds sandboxes only while work that launches bots is
queued (:func:`demand`: a tournament, the ladder's concurrency, an SPRT's concurrency), at most
as many as that work launches at once, within a memory budget, and stops them all when the work
is done. Only SDK bots (package, file or module) are served warm; shell-command bots start cold.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.sandbox import DEFAULT_MAX_TASKS, BotProcess, jail, seccomp
from referee.sandbox.botcode import INSIDE, stage_code
from referee.sandbox.identity import HostIdentity, bot_uid
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import (
    DEFAULT_MEMORY_MB,
    OUTPUT_LIMIT_BYTES,
    BotSpec,
    LaunchedBot,
)
from referee.sandbox.memory import sample_tree
from referee.sandbox.venv import python_inside
from referee.telemetry.logs import get_logger
from referee.telemetry.metrics import set_warm_pool_size, warm_launch

__all__ = ["WARM_PREIMPORTS", "Demand", "WarmPool", "WarmTerms", "current_pool", "demand"]

log = get_logger("referee.sandbox.warm")

#: Top-level modules a warm sandbox has imported before its game: a bot whose own code ships a
#: module of one of these names (which would shadow it in a cold launch) is launched cold.
WARM_PREIMPORTS = frozenset({"client_sdk", "engine", "referee", "grpc", "google", "numpy"})
RUN_INSIDE = str(Path(jail.SOCKET_INSIDE).parent)
#: Resident memory of one ready warm sandbox (Python with the SDK, gRPC, the rules and NumPy
#: imported, plus bwrap's two small processes): 53.5 MB measured on x86-64, Python 3.11.
DEFAULT_COST_BYTES = 56 * 1024 * 1024
#: The share of the machine's available memory warm sandboxes may hold at most.
MEMORY_SHARE = 0.25
#: The niceness a warm sandbox imports at (a root referee only, which restores 0 for the game):
#: on a busy machine its start-up takes the CPU the running games leave, not theirs.
WARM_NICE = 10
#: Set to ``0`` to turn warm sandboxes off (every launch cold).
ENV_SWITCH = "TETROMINO_WARM_SANDBOXES"


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


async def start_sandbox(terms: WarmTerms) -> WarmSandbox:
    """Start one warm sandbox with ``terms`` (its Python then imports the platform)."""
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
        argv += ["-m", "client_sdk._warm", str(reader), str(ready_w)]
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


class _NotServable(Exception):
    """This bot cannot be given this warm sandbox (it is discarded; the launch goes cold)."""


def hand_over(
    sandbox: WarmSandbox,
    spec: BotSpec,
    server: str,
    token: str,
    exclude: Sequence[Path],
    game_env: Mapping[str, str] | None = None,
) -> LaunchedBot:
    """Give ``sandbox`` its game: the code copy, the socket, the token, the command line, and
    the game's own variables (``game_env``, e.g. its ``TETROMINO_SEED``)."""
    folder = sandbox.folder
    code = stage_code(spec.kind, spec.value, folder / "code", exclude)
    shipped = {Path(name).name.split(".", 1)[0] for name in os.listdir(folder / "code")}
    if shipped & WARM_PREIMPORTS:
        raise _NotServable(f"the bot ships {sorted(shipped & WARM_PREIMPORTS)}")
    run = folder / "run"
    socket_path = server.removeprefix("unix:")
    os.chmod(socket_path, 0o666)  # as for a cold launch: only the private folder guards it
    try:
        os.link(socket_path, run / "referee.sock")
    except OSError as exc:
        raise _NotServable(f"cannot link the referee socket: {exc}") from exc
    token_path = run / "token"
    with open(os.open(token_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400), "w") as handle:
        handle.write(token)
    if sandbox.run_as is not None:
        jail._give(folder, sandbox.run_as.uid)
        _restore_priority(sandbox.proc.pid)
    pythonpath = jail._environment(sandbox.terms.memory_mb, code.on_path)["PYTHONPATH"]
    args = jail.inner_argv(spec.kind, code.value)[3:]
    order = {"args": args, "pythonpath": pythonpath, "env": dict(game_env or {})}
    message = json.dumps(order).encode()
    try:
        os.write(sandbox.control, message)
    except OSError as exc:
        raise _NotServable(f"the sandbox is gone: {exc}") from exc
    finally:
        sandbox.close_fds()
    sandbox.proc.started_at = time.monotonic()
    cage = jail.Jail(sandbox.argv, sandbox.env, (), folder, code, sandbox.run_as)
    return LaunchedBot(spec, sandbox.proc, token, Isolation.BWRAP, jail=cage, warm=True)


@dataclass(eq=False)
class Demand:
    """Work's claim on a pool: up to ``slots`` sandboxes with ``terms`` (``None``: the terms
    of its launches, learnt from the first), and, when known, how many launches it has left
    (``launches``: each launch served or missed counts one; it never wants more than that)."""

    pool: WarmPool
    terms: WarmTerms | None
    slots: int
    launches: int | None = None

    def resize(self, slots: int, launches: int | None = None) -> None:
        """The work now launches at most ``slots`` bots at once, ``launches`` in all."""
        self.slots = max(0, slots)
        if launches is not None:
            self.launches = max(0, launches)
        self.pool.changed()

    @property
    def wanted(self) -> int:
        return self.slots if self.launches is None else min(self.slots, self.launches)


class WarmPool:
    """Never-used warm sandboxes of one event loop, kept while work is queued."""

    def __init__(self, budget_bytes: int | None = None) -> None:
        self._idle: dict[WarmTerms, list[WarmSandbox]] = {}
        self._demands: list[Demand] = []
        self._learnt: WarmTerms | None = None
        self._starting: Counter[WarmTerms] = Counter()
        self._budget = budget_bytes if budget_bytes is not None else _memory_budget()
        self._wake = asyncio.Event()
        self._filler: asyncio.Task[None] | None = None
        self.hits = 0
        self.misses = 0

    @property
    def size(self) -> int:
        """Sandboxes started and waiting for a game."""
        return sum(len(v) for v in self._idle.values())

    @property
    def capacity(self) -> int:
        """How many warm sandboxes the memory budget allows at once."""
        return max(0, self._budget // DEFAULT_COST_BYTES)

    def add(self, need: Demand) -> None:
        """Count ``need`` in what is wanted (until :meth:`remove`)."""
        self._demands.append(need)
        self.changed()

    def remove(self, need: Demand) -> None:
        with contextlib.suppress(ValueError):
            self._demands.remove(need)
        self.changed()

    def changed(self) -> None:
        """What is wanted changed: start or stop sandboxes to match."""
        if self._filler is None or self._filler.done():
            self._filler = asyncio.get_running_loop().create_task(self._fill(), name="warm-pool")
        self._wake.set()

    def _terms_of(self, need: Demand) -> WarmTerms | None:
        return need.terms if need.terms is not None else self._learnt

    def _targets(self) -> Counter[WarmTerms]:
        """How many sandboxes of which terms are wanted now."""
        targets: Counter[WarmTerms] = Counter()
        for need in self._demands:
            terms = self._terms_of(need)
            if terms is not None and need.wanted > 0:
                targets[terms] += need.wanted
        return targets

    def take(self, terms: WarmTerms) -> WarmSandbox | None:
        """A never-used sandbox with ``terms``, if one is waiting (counted as a hit or miss)."""
        if any(need.terms is None for need in self._demands):
            self._learnt = terms
        wanted = terms in self._targets()
        for need in self._demands:
            if self._terms_of(need) == terms and need.launches:
                need.launches -= 1
                break
        idle = self._idle.get(terms, [])
        idle.sort(key=lambda s: not s.is_ready())  # ready ones first, then the oldest
        while idle:
            sandbox = idle.pop(0)
            if sandbox.proc.running:
                self._publish()
                return sandbox  # a hit once it is handed over (see count())
            asyncio.get_running_loop().create_task(sandbox.discard())
        if wanted:
            self.count(False)
        return None

    async def ready(
        self, terms: WarmTerms | None = None, count: int = 1, timeout: float = 60.0
    ) -> None:
        """Wait until ``count`` sandboxes with ``terms`` wait with their imports done."""
        terms = terms or WarmTerms()
        async with asyncio.timeout(timeout):
            while sum(s.is_ready() for s in self._idle.get(terms, [])) < count:
                await asyncio.sleep(0.005)

    def count(self, hit: bool) -> None:
        """A launch was served warm (``hit``) or went cold while a pool was wanted."""
        if hit:
            self.hits += 1
        else:
            self.misses += 1
        warm_launch(hit)
        self._wake.set()
        self._publish()

    def _publish(self) -> None:
        set_warm_pool_size(self.size)

    async def _fill(self) -> None:
        """Keep as many sandboxes as are wanted (within the budget); stop the unwanted ones."""
        while self._demands or self.size:
            self._wake.clear()
            await self._trim()
            terms = self._short_of()
            if terms is None:
                await self._wake.wait()
                continue
            self._starting[terms] += 1
            try:
                sandbox = await start_sandbox(terms)
            except Exception as exc:  # the cold launch will report the same problem
                log.warning("warm sandbox not started", error=str(exc))
                self._demands = [d for d in self._demands if self._terms_of(d) != terms]
                continue
            finally:
                self._starting[terms] -= 1
            self._idle.setdefault(terms, []).append(sandbox)
            self._publish()
        self._publish()

    def _short_of(self) -> WarmTerms | None:
        if self.size + sum(self._starting.values()) >= self.capacity:
            return None
        for terms, slots in self._targets().items():
            if len(self._idle.get(terms, [])) + self._starting[terms] < slots:
                return terms
        return None

    async def _trim(self) -> None:
        extra: list[WarmSandbox] = []
        targets = self._targets()
        for terms, idle in self._idle.items():
            keep = targets.get(terms, 0)
            while len(idle) > keep:
                extra.append(idle.pop())
        if extra:
            await asyncio.gather(*(s.discard() for s in extra), return_exceptions=True)
            self._publish()

    async def settle(self) -> None:
        """Stop every sandbox no longer wanted (when nothing is wanted: all of them)."""
        await self._trim()
        if not self._demands and self._filler is not None:
            self._wake.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._filler
            self._filler = None
            await self._trim()


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WarmPool] = weakref.WeakKeyDictionary()


def current_pool() -> WarmPool | None:
    """This event loop's pool, if work has asked for one."""
    return _POOLS.get(asyncio.get_running_loop())


def enabled(isolation: Isolation | None = None) -> bool:
    """Whether launches here may be served warm (sandboxed, and not switched off)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return False
    if isolation is None:
        from referee.sandbox.isolation import choose

        isolation = choose()
    return isolation is Isolation.BWRAP


@contextlib.asynccontextmanager
async def demand(
    slots: int, terms: WarmTerms | None = None, isolation: Isolation | None = None
) -> AsyncIterator[Demand | None]:
    """While the block runs, keep up to ``slots`` warm sandboxes with ``terms`` (the bots the
    queued work launches at once; ``None``: the terms its launches use, learnt from the
    first); on leaving, stop those no other work wants. ``None`` when launches here cannot be
    served warm (no sandbox, or switched off with ``TETROMINO_WARM_SANDBOXES=0``)."""
    if not enabled(isolation):
        yield None
        return
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None:
        pool = _POOLS[loop] = WarmPool()
    need = Demand(pool, terms, slots)
    pool.add(need)
    try:
        yield need
    finally:
        pool.remove(need)
        await asyncio.shield(pool.settle())


async def launch_warm(
    spec: BotSpec,
    server: str,
    token: str,
    terms: WarmTerms,
    exclude: Sequence[Path],
    game_env: Mapping[str, str] | None = None,
) -> LaunchedBot | None:
    """The bot started in a warm sandbox, or ``None`` (no pool, none waiting, or this bot
    cannot be served warm): the caller launches it cold. ``game_env`` is set in the bot's
    environment before its code loads."""
    if spec.kind != "sdk" or not server.startswith("unix:"):
        return None
    pool = current_pool()
    sandbox = pool.take(terms) if pool is not None else None
    if pool is None or sandbox is None:
        return None
    try:
        bot = hand_over(sandbox, spec, server, token, exclude, game_env)
    except _NotServable as exc:
        log.info("launching cold", bot=spec.label, reason=str(exc))
        pool.count(False)
    except BaseException:
        await sandbox.discard()
        raise
    else:
        pool.count(True)
        return bot
    await sandbox.discard()
    return None


def _restore_priority(root: int) -> None:
    """Every thread of the sandbox back to niceness 0 (the bot plays at the usual priority)."""
    for pid in sample_tree(root, []).pids:
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, int(task), 0)


def _memory_budget() -> int:
    """The bytes warm sandboxes may hold: a share of the memory available now."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(int(line.split()[1]) * 1024 * MEMORY_SHARE)
    except (OSError, ValueError):
        pass
    return 8 * DEFAULT_COST_BYTES
