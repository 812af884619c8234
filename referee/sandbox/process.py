"""BotProcess: one supervised bot process, its memory limit, its output and its cleanup (what
is known of its run, :class:`~referee.sandbox.runfacts.BotRun`, is kept apart)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Literal, Self

from referee.sandbox import identity, lastresort, poller
from referee.sandbox.botgroups import BotCgroups
from referee.sandbox.cgroups import CgroupParent
from referee.sandbox.exits import MemoryVerdict, unwrap_status
from referee.sandbox.memory import (
    DEFAULT_CGROUP_HEADROOM_MB,
    DEFAULT_RLIMIT_DATA_HEADROOM_MB,
    MemoryPolicy,
    judged_resident,
    sample_tree,
)
from referee.sandbox.output import OutputMode, OutputPipe
from referee.sandbox.runfacts import BotRun
from referee.sandbox.spawn import resolve_program, spawn_shim
from referee.sandbox.tree import TAG_VARIABLE, TreeTracker

__all__ = ["DEFAULT_MAX_TASKS", "BotProcess", "ClosedOnExit", "MemoryVerdict", "OutputMode"]

log = logging.getLogger(__name__)

_SIGKILL_WAIT_S = 10.0
#: Processes plus threads a launched bot may have at once, where a ``pids`` cgroup enforces it.
#: A Python gRPC bot uses about 10-20; a multiprocessing pool on a large machine stays well
#: under this; a fork bomb does not.
DEFAULT_MAX_TASKS = 256


class ClosedOnExit:
    """Leaving ``async with`` one runs its :meth:`aclose`, however the block ended."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class BotProcess(BotRun, ClosedOnExit):
    """A bot running under the sandbox. Make one with ``await BotProcess.start(...)``.

    Always release it with ``await proc.stop()`` or ``async with proc:``; a
    :class:`~referee.sandbox.group.SupervisorGroup` does that for every process it started.
    """

    # -- construction -------------------------------------------------------------------------

    def __init__(self) -> None:  # use start()
        super().__init__()
        self.pid = 0
        self.poll_interval_s = 0.02
        self._status_lost = False
        self._pidfd: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._tracker: TreeTracker | None = None
        self._reaper_task: asyncio.Task[None] | None = None
        # Memory is sampled (and an over-limit bot killed) on the poller thread; reaping and
        # verdicts happen on the event loop. This lock keeps the two apart: while it is held
        # the main process is either unreaped (its pid and pidfd still name it) or known dead.
        self._lock = threading.RLock()
        self._watched = False
        self._reaped = False
        self._stop_lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Whether the bot runs under a wrapper (the sandbox) rather than as the main process.
        self._wrapped = False

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        memory_limit_mb: float | None = 250,
        stderr_limit_bytes: int = 64 * 1024,
        poll_interval_s: float = 0.02,
        stdout: OutputMode = "capture",
        cgroup: Literal["auto", "off"] | CgroupParent = "auto",
        rlimit_data_headroom_mb: float = DEFAULT_RLIMIT_DATA_HEADROOM_MB,
        cgroup_headroom_mb: float = DEFAULT_CGROUP_HEADROOM_MB,
        pass_fds: Sequence[int] = (),
        max_tasks: int | None = DEFAULT_MAX_TASKS,
        wrapped: bool = False,
        run_as: identity.HostIdentity | None = None,
        niceness: int | None = None,
        cpu_class: int = 0,
    ) -> BotProcess:
        """Launch ``argv`` as a bot: stdin from /dev/null, ``env`` (default: the referee's) plus
        a random tag variable marking its descendants, its own session and process group,
        RLIMIT_DATA = limit + ``rlimit_data_headroom_mb``, no core files, and (where usable and
        ``cgroup`` is not ``"off"``) its own memory cgroup capped at limit +
        ``cgroup_headroom_mb`` and a ``pids`` cgroup allowing ``max_tasks`` processes and
        threads. Its stderr, and its stdout unless ``stdout`` says otherwise, go to one bounded
        capture. ``memory_limit_mb=None`` measures without limiting. ``wrapped``: ``argv`` runs
        the bot under a wrapper (the sandbox) that exits with 128 + N when the bot is killed by
        signal N. ``run_as``: the host uid/gid it becomes once in its cgroups (root only).
        ``niceness``: the CPU priority it runs at (``None``: the referee's own); ``cpu_class``
        > 0: a background game's bot, given that class's ``cpu`` cgroup weight (cpuweight.py).
        Raises FileNotFoundError / PermissionError if the program cannot be run."""
        _check_arguments(argv, poll_interval_s, max_tasks)
        self = cls()
        self._loop = asyncio.get_running_loop()
        self.argv = tuple(argv)
        self._wrapped = wrapped
        self.poll_interval_s = poll_interval_s
        if memory_limit_mb is not None:
            self.policy = MemoryPolicy(memory_limit_mb, rlimit_data_headroom_mb, cgroup_headroom_mb)
        limit = self.policy.cgroup_limit_bytes if self.policy is not None else None
        self._groups = BotCgroups.create(cgroup, limit, max_tasks, cpu_class)
        self._output = OutputPipe(stderr_limit_bytes) if stderr_limit_bytes > 0 else None
        tag = secrets.token_hex(8)
        child_env = dict(os.environ if env is None else env)
        child_env[TAG_VARIABLE] = tag
        try:
            self._spawn(argv, child_env, cwd, stdout, pass_fds, run_as, niceness)
        except BaseException:
            if self._output is not None:
                self._output.abandon()
            for cg in self._groups.all():
                cg.remove()
            raise
        self._watch(tag)
        return self

    def _spawn(
        self,
        argv: Sequence[str],
        env: dict[str, str],
        cwd: str | os.PathLike[str] | None,
        stdout: OutputMode,
        pass_fds: Sequence[int],
        run_as: identity.HostIdentity | None = None,
        niceness: int | None = None,
    ) -> None:
        out, err = OutputPipe.targets(self._output, stdout)
        self._popen = spawn_shim(
            resolve_program(argv[0], env, cwd),
            argv,
            data_bytes=self.policy.rlimit_data_bytes if self.policy else 0,
            cgroup_procs=self._groups.join_files(),
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=err,
            pass_fds=pass_fds,
            run_as=run_as,
            niceness=niceness,
        )

    def _watch(self, tag: str) -> None:
        """The process runs: track its tree, read its output, notice its exit, poll memory."""
        assert self._popen is not None and self._loop is not None
        self.pid = self._popen.pid
        self.started_at = time.monotonic()
        self._tracker = TreeTracker(self.pid, tag)
        lastresort.register(self)
        if self._output is not None:
            self._output.started(self._loop)
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self._pidfd = None  # the reaper task polls waitpid instead
        if self._pidfd is not None:
            self._loop.add_reader(self._pidfd, self._on_exit_ready)
        else:
            self._reaper_task = self._loop.create_task(self._reap_loop(), name=f"reap-{self.pid}")
        self._watched = True
        poller.watch(self)

    async def wait(self) -> int | None:
        """Wait for the main process to exit; returns ``returncode``."""
        await self.exited_event.wait()
        return self.returncode

    async def wait_memory_exceeded(self) -> None:
        """Return once the bot is judged over its limit (never returns otherwise)."""
        await self.memory_exceeded_event.wait()

    # -- stopping -------------------------------------------------------------------------------

    async def stop(self, grace_s: float = 1.0) -> None:
        """Stop the bot and release everything it holds; safe to call many times.

        SIGTERM to the main process, its process group and every remembered descendant, then
        SIGKILL to all of them if the main process has not exited within ``grace_s``. Then
        sweeps up leftovers (descendants that left the group, members of the cgroup), stops
        the monitor, drains the output, and removes the cgroup. If cancelled midway, kills
        everything at once before re-raising.
        """
        async with self._stop_lock:
            if self._closed:
                return
            try:
                if self.running:
                    self._stop_signal = signal.SIGTERM
                    self._signal_all(signal.SIGTERM)
                    try:
                        await asyncio.wait_for(self.exited_event.wait(), grace_s)
                    except TimeoutError:
                        self._stop_signal = signal.SIGKILL
                        self._signal_all(signal.SIGKILL)
                        try:
                            await asyncio.wait_for(self.exited_event.wait(), _SIGKILL_WAIT_S)
                        except TimeoutError:
                            # Stuck in the kernel (D state): release what we can, say so.
                            log.error("bot %s survived SIGKILL for %ss", self.pid, _SIGKILL_WAIT_S)
                await self._release()
            except BaseException:
                self.kill_now()
                raise

    async def aclose(self) -> None:
        """:meth:`stop` with the default grace: what leaving ``async with`` does."""
        await self.stop()

    def lower_cpu(self, cpu_class: int) -> None:
        """Give the running bot the ``cpu`` cgroup weight of a background class (a warm
        sandbox handed to a background game; see :mod:`.cpuweight`)."""
        self._groups.lower_now(cpu_class, lambda: sample_tree(self.pid, []).pids)

    def kill_now(self) -> None:
        """Synchronous last resort: SIGKILL everything of this bot, remove what can be removed.

        For atexit handlers and cancellation paths; prefer ``await stop()``.
        """
        with self._lock:  # the poller thread may be sampling (and remembering pids) right now
            self._signal_all(signal.SIGKILL)
            if self._tracker is not None:
                self._tracker.sweep(self._groups.pids())
        for cg in self._groups.all():
            cg.kill_all()
            for _ in range(50):
                if cg.try_remove():
                    break
                time.sleep(0.01)

    def _signal_all(self, sig: int) -> None:
        with self._lock:
            if self._wrapped and sig != signal.SIGKILL:
                # The sandbox's wrapper would die of it and take the bot down unwarned: the
                # bot's own processes get it instead (found afresh, not just from the polls).
                if not self._reaped and self._tracker is not None:
                    self._tracker.remember(sample_tree(self.pid, []).pids)
            elif not self._reaped and self._popen is not None:
                try:
                    if self._pidfd is not None:
                        signal.pidfd_send_signal(self._pidfd, sig)
                    else:
                        self._popen.send_signal(sig)
                except OSError:
                    pass
            if self._tracker is not None:
                # The wrapper leads the process group: only SIGKILL may reach it that way.
                self._tracker.signal_others(sig, group=not self._wrapped or sig == signal.SIGKILL)
            if sig == signal.SIGKILL:
                for cg in self._groups.all():
                    cg.kill_all()

    def _drain_output(self) -> None:
        if self._output is not None:
            self._output.drain()

    def _close_output(self) -> None:
        if self._output is not None:
            self._output.close()

    def _on_exit_ready(self) -> None:
        self._try_reap()

    def _try_reap(self) -> bool:
        """Reap the main process if it has exited; then settle its verdict facts."""
        if not self.running:
            return True
        with self._lock:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                # Someone else's waitpid(-1) reaped it: the status is lost, the exit is not.
                self._status_lost = True
                pid, status = self.pid, 0
            if pid == 0:
                return False
            self._reaped = True
            if self._pidfd is not None:
                if self._loop is not None:
                    self._loop.remove_reader(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
        self.ended_at = time.monotonic()
        if self._status_lost:
            self.returncode = None
        else:
            self.returncode = unwrap_status(os.waitstatus_to_exitcode(status), self._wrapped)
        if self._popen is not None:
            # Tell Popen it is reaped so it never waits or warns about it.
            self._popen.returncode = self.returncode if self.returncode is not None else -1
        if self._groups.memory is not None:
            self._cgroup_peak = self._groups.memory.peak_bytes()
            if self._cgroup_peak:
                self._cgroup_joined = True  # something was charged to it: the bot joined
        self._tasks_refused_seen = self.tasks_refused
        self._drain_output()
        self._judge_after_exit()
        # The bot is over: its leftovers go now, without grace.
        if self._tracker is not None:
            self._tracker.signal_others(signal.SIGKILL)
        for cg in self._groups.all():
            cg.kill_all()
        self.exited_event.set()
        return True

    def _judge_after_exit(self) -> None:
        if self.memory_exceeded:
            return
        tail = self._output.capture.tail_bytes(4096) if self._output else b""
        verdict = self.judge_memory(tail)
        if verdict is not None:
            self._mark_exceeded(verdict)

    def _mark_exceeded(self, why: MemoryVerdict) -> None:
        if not self.memory_exceeded:
            self.memory_exceeded = True
            self.memory_verdict = why
            self.memory_exceeded_event.set()

    def poll_memory(self) -> bool:
        """One sample of the tree's memory (on the poller thread); kills the bot once it is
        over its limit. Returns False when the bot needs no more samples."""
        assert self._tracker is not None
        limit = self.policy.limit_bytes if self.policy else None
        with self._lock:
            if self._reaped or not self._watched:
                return False
            t0 = time.perf_counter()
            extra = self._groups.pids()
            self._cgroup_joined |= bool(extra) and self._groups.memory is not None
            # A sandboxed bot cannot leave the cgroups its root joined: all of it is there.
            self._tracker.confined |= self._wrapped and self.pid in extra
            sample = sample_tree(self.pid, extra)
            self._tracker.remember(sample.pids)
            cgroup = self._groups.memory if self._cgroup_joined else None
            self._peak_tree_rss = max(self._peak_tree_rss, judged_resident(sample, limit, cgroup))
            self._peak_hwm = max(self._peak_hwm, sample.max_hwm_bytes)
            self.samples += 1
            self.sample_time_s += time.perf_counter() - t0
            if limit is None or self.peak_rss_bytes <= limit:
                return True
            self._signal_all(signal.SIGKILL)
        # The verdict is settled on the loop: by this call, or by the reaper (which sees the
        # same peak), whichever runs first.
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._loop.call_soon_threadsafe(self._mark_exceeded, "rss")
        return False

    async def _reap_loop(self) -> None:
        """Without a pidfd to wait on, poll waitpid until the main process has exited."""
        while not self._try_reap():
            await asyncio.sleep(self.poll_interval_s)

    async def _release(self) -> None:
        poller.unwatch(self)
        with self._lock:  # waits out a sample in progress
            self._watched = False
        if self._reaper_task is not None:
            self._reaper_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper_task
            self._reaper_task = None
        if self._tracker is not None:
            deadline = time.monotonic() + 5.0
            self._tracker.sweep(self._groups.pids())
            while self._tracker.any_alive(self._groups.pids()) and time.monotonic() < deadline:
                self._tracker.sweep(self._groups.pids())
                await asyncio.sleep(0.01)
        self._drain_output()
        self._close_output()
        if self._groups.memory is not None and self._cgroup_peak is None:
            self._cgroup_peak = self._groups.memory.peak_bytes()
        self._tasks_refused_seen = max(self._tasks_refused_seen, self.tasks_refused)
        for cg in self._groups.all():
            deadline = time.monotonic() + 5.0
            while not cg.remove() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        self._closed = True
        lastresort.unregister(self)


def _check_arguments(argv: Sequence[str], poll_interval_s: float, max_tasks: int | None) -> None:
    if not argv:
        raise ValueError("argv must not be empty")
    if poll_interval_s <= 0:
        raise ValueError("poll_interval_s must be positive")
    if max_tasks is not None and max_tasks < 1:
        raise ValueError("max_tasks must be at least 1")
