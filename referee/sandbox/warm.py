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
import os
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox.botcode import imported_names
from referee.sandbox.bots import (
    BotSpec,
    LaunchedBot,
)
from referee.sandbox.isolation import Isolation
from referee.sandbox.warmbox import (
    WARM_PREIMPORTS as WARM_PREIMPORTS,
)
from referee.sandbox.warmbox import (
    NotServable,
    WarmSandbox,
    WarmTerms,
    hand_over,
    start_sandbox,
)
from referee.telemetry.logs import get_logger
from referee.telemetry.metrics import set_warm_pool_size, warm_launch

__all__ = [
    "WARM_PREIMPORTS",
    "Demand",
    "WarmPool",
    "WarmTerms",
    "current_pool",
    "demand",
    "may_import_numpy",
]

log = get_logger("referee.sandbox.warm")

#: Resident memory of one ready warm sandbox (Python with the SDK, gRPC, the rules and NumPy
#: imported, plus bwrap's two small processes): 53.5 MB measured on x86-64, Python 3.11.
DEFAULT_COST_BYTES = 56 * 1024 * 1024
#: The share of the machine's available memory warm sandboxes may hold at most.
MEMORY_SHARE = 0.25
#: Set to ``0`` to turn warm sandboxes off (every launch cold).
ENV_SWITCH = "TETROMINO_WARM_SANDBOXES"


@dataclass(eq=False)
class Demand:
    """Work's claim on a pool: up to ``slots`` sandboxes with ``terms`` (``None``: the terms
    of its launches, learnt from the first), and, when known, how many launches it has left
    (``launches``: each launch served or missed counts one; it never wants more than that).
    ``numpy``: whether its bots may import NumPy (then its sandboxes import it ahead too)."""

    pool: WarmPool
    terms: WarmTerms | None
    slots: int
    launches: int | None = None
    numpy: bool = True

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
                sandbox = await start_sandbox(terms, self._numpy_for(terms))
            except Exception as exc:  # the cold launch will report the same problem
                log.warning("warm sandbox not started", error=str(exc))
                self._demands = [d for d in self._demands if self._terms_of(d) != terms]
                continue
            finally:
                self._starting[terms] -= 1
            self._idle.setdefault(terms, []).append(sandbox)
            self._publish()
        self._publish()

    def _numpy_for(self, terms: WarmTerms) -> bool:
        """Whether sandboxes with ``terms`` import NumPy ahead: some work wanting them may."""
        return any(d.numpy for d in self._demands if self._terms_of(d) == terms)

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
    slots: int,
    terms: WarmTerms | None = None,
    isolation: Isolation | None = None,
    *,
    numpy: bool = True,
) -> AsyncIterator[Demand | None]:
    """While the block runs, keep up to ``slots`` warm sandboxes with ``terms`` (the bots the
    queued work launches at once; ``None``: the terms its launches use, learnt from the
    first); on leaving, stop those no other work wants. ``None`` when launches here cannot be
    served warm (no sandbox, or switched off with ``TETROMINO_WARM_SANDBOXES=0``).
    ``numpy=False`` when none of the work's bots imports NumPy (:func:`may_import_numpy`):
    its sandboxes then skip that import (its CPU and memory), which those bots never use."""
    if not enabled(isolation):
        yield None
        return
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None:
        pool = _POOLS[loop] = WarmPool()
    need = Demand(pool, terms, slots, numpy=numpy)
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
    niceness: int | None = None,
    cpu_class: int = 0,
) -> LaunchedBot | None:
    """The bot started in a warm sandbox, or ``None`` (no pool, none waiting, or this bot
    cannot be served warm): the caller launches it cold. ``game_env`` is set in the bot's
    environment before its code loads; ``niceness``: its CPU priority (``None``: the
    referee's own); ``cpu_class`` > 0: its background class's ``cpu`` cgroup weight."""
    if spec.kind != "sdk" or not server.startswith("unix:"):
        return None
    pool = current_pool()
    sandbox = pool.take(terms) if pool is not None else None
    if pool is None or sandbox is None:
        return None
    try:
        bot = hand_over(sandbox, spec, server, token, exclude, game_env, niceness, cpu_class)
    except NotServable as exc:
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


def may_import_numpy(specs: Iterable[BotSpec]) -> bool:
    """Whether any of these bots may import NumPy: its own code imports it by name, or that
    cannot be read (the safe guess). A bot that imports it only through another package
    imports it itself at start, as it would launched cold."""
    for spec in specs:
        names = imported_names(spec.kind, spec.value)
        if spec.kind == "sdk" and (names is None or "numpy" in names):
            return True
    return False


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
