"""BotProcess: one supervised bot process, its memory limit, its output and its cleanup."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from referee.sandbox import lastresort, poller
from referee.sandbox.cgroups import (
    CgroupParent,
    MemoryCgroup,
    TaskCgroup,
    detect_cgroup_parent,
    detect_pids_parent,
)
from referee.sandbox.memory import (
    DEFAULT_CGROUP_HEADROOM_MB,
    DEFAULT_RLIMIT_DATA_HEADROOM_MB,
    MemoryPolicy,
    format_mb,
    looks_like_memory_error,
    sample_tree,
)
from referee.sandbox.stderr import BoundedCapture
from referee.sandbox.tree import TAG_VARIABLE, TreeTracker

__all__ = ["DEFAULT_MAX_TASKS", "BotProcess", "MemoryVerdict", "OutputMode"]

log = logging.getLogger(__name__)

_SHIM = str(Path(__file__).with_name("_shim.py"))
_READ_CHUNK = 65536
_SIGKILL_WAIT_S = 10.0
#: Processes plus threads a launched bot may have at once, where a ``pids`` cgroup enforces it.
#: A Python gRPC bot uses about 10-20; a multiprocessing pool on a large machine stays well
#: under this; a fork bomb does not.
DEFAULT_MAX_TASKS = 256

OutputMode = Literal["capture", "discard", "inherit"]
#: Why a bot was judged over its memory limit.
MemoryVerdict = Literal["rss", "cgroup_oom", "memory_error"]


class BotProcess:
    """A bot running under the sandbox. Make one with ``await BotProcess.start(...)``.

    Always release it with ``await proc.stop()`` or ``async with proc:``; a
    :class:`~referee.sandbox.group.SupervisorGroup` does that for every process it started.
    """

    # -- construction -------------------------------------------------------------------------

    def __init__(self) -> None:  # use start()
        self.argv: tuple[str, ...] = ()
        self.pid = 0
        self.policy: MemoryPolicy | None = None
        self.poll_interval_s = 0.02
        self.returncode: int | None = None
        self.memory_exceeded = False
        self.memory_verdict: MemoryVerdict | None = None
        #: Set as soon as the bot is judged over its memory limit (before it is dead).
        self.memory_exceeded_event = asyncio.Event()
        #: Set once the bot's main process has exited and its verdict facts are final.
        self.exited_event = asyncio.Event()
        self.started_at = time.monotonic()
        self.ended_at: float | None = None
        self.samples = 0
        self.sample_time_s = 0.0
        self._peak_tree_rss = 0
        self._peak_hwm = 0
        self._cgroup_peak: int | None = None
        self._stop_signal: int | None = None
        self._status_lost = False
        self._capture: BoundedCapture | None = None
        self._out_fd: int | None = None
        self._pidfd: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._cgroup: MemoryCgroup | None = None
        self._cgroup_joined = False
        self._task_cgroup: TaskCgroup | None = None
        self._tasks_refused_seen = 0
        #: The cap on the bot's processes and threads, when a cgroup enforces one.
        self.max_tasks: int | None = None
        self._tracker: TreeTracker | None = None
        self._reaper_task: asyncio.Task[None] | None = None
        # Memory is sampled (and an over-limit bot killed) on the poller thread; reaping and
        # verdicts happen on the event loop. This lock keeps the two apart: while it is held
        # the main process is either unreaped (its pid and pidfd still name it) or known dead.
        self._lock = threading.RLock()
        self._watched = False
        self._reaped = False
        self._stop_lock = asyncio.Lock()
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None

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
    ) -> BotProcess:
        """Launch ``argv`` as a bot.

        The bot gets stdin from /dev/null, ``env`` (default: the referee's environment) plus a
        random tag variable that marks its descendants, leads its own session and process
        group, runs with
        RLIMIT_DATA = limit + ``rlimit_data_headroom_mb`` and no core files, and (where a
        memory cgroup is usable and ``cgroup`` is not ``"off"``) in its own cgroup capped at
        limit + ``cgroup_headroom_mb``, and (where a ``pids`` cgroup is usable) with at most
        ``max_tasks`` processes and threads at once. Its stderr, and its stdout unless
        ``stdout`` says otherwise, go to one bounded capture. ``memory_limit_mb=None``
        measures without limiting. Raises FileNotFoundError / PermissionError if the program
        cannot be run.
        """
        if not argv:
            raise ValueError("argv must not be empty")
        if poll_interval_s <= 0:
            raise ValueError("poll_interval_s must be positive")
        if max_tasks is not None and max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self = cls()
        self._loop = asyncio.get_running_loop()
        self.argv = tuple(argv)
        self.poll_interval_s = poll_interval_s
        if memory_limit_mb is not None:
            self.policy = MemoryPolicy(memory_limit_mb, rlimit_data_headroom_mb, cgroup_headroom_mb)
        executable = _resolve(argv[0], env, cwd)
        tag = secrets.token_hex(8)
        child_env = dict(os.environ if env is None else env)
        child_env[TAG_VARIABLE] = tag

        parent = detect_cgroup_parent() if cgroup == "auto" else cgroup
        if isinstance(parent, CgroupParent) and self.policy is not None:
            try:
                self._cgroup = MemoryCgroup.create(parent, self.policy.cgroup_limit_bytes)
            except OSError as e:
                log.warning("bot runs without a memory cgroup: %s", e)
        if max_tasks is not None and cgroup != "off":
            self._limit_tasks(max_tasks)

        read_fd: int | None = None
        write_fd: int | None = None
        if stderr_limit_bytes > 0:
            read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
            os.set_blocking(read_fd, False)
            self._capture = BoundedCapture(stderr_limit_bytes)
        stderr_target: int = write_fd if write_fd is not None else subprocess.DEVNULL
        stdout_target: int | None
        if stdout == "capture":
            stdout_target = stderr_target
        elif stdout == "discard":
            stdout_target = subprocess.DEVNULL
        else:
            stdout_target = None
        shim_argv = [
            sys.executable,
            "-S",
            "-E",
            "-s",
            _SHIM,
            str(self.policy.rlimit_data_bytes if self.policy else 0),
            "\n".join(str(cg.procs_file) for cg in self._cgroups()) or "-",
            str(os.getpid()),
            executable,
            *argv,
        ]
        try:
            self._popen = subprocess.Popen(
                shim_argv,
                stdin=subprocess.DEVNULL,
                stdout=stdout_target,
                stderr=stderr_target,
                env=child_env,
                cwd=cwd,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
        except BaseException:
            for fd in (read_fd, write_fd):
                if fd is not None:
                    os.close(fd)
            for cg in self._cgroups():
                cg.remove()
            raise
        finally:
            if write_fd is not None and self._popen is not None:
                os.close(write_fd)
        self.pid = self._popen.pid
        self.started_at = time.monotonic()
        self._tracker = TreeTracker(self.pid, tag)
        lastresort.register(self)
        if read_fd is not None:
            self._out_fd = read_fd
            self._loop.add_reader(read_fd, self._on_output)
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
        return self

    # -- public facts ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the main process has not exited yet."""
        return not self.exited_event.is_set()

    @property
    def stop_requested(self) -> bool:
        """Whether ``stop()`` signalled the bot before it exited on its own."""
        return self._stop_signal is not None

    @property
    def peak_rss_bytes(self) -> int:
        """Peak resident memory: the larger of the polled tree sum and any process's own high
        water mark (VmHWM).

        wait4()'s ru_maxrss is deliberately not used: the bot is spawned with vfork(), and at
        exec the kernel folds the *parent's* high-water RSS into the child's maxrss, so a
        referee that has grown past the limit would see every bot "exceed" it."""
        return max(self._peak_tree_rss, self._peak_hwm)

    @property
    def peak_bytes(self) -> int:
        """The best evidence of the bot's peak: its resident peak, or the cgroup's own peak
        charge when that is higher (the kernel sees allocations between two polls)."""
        return max(self.peak_rss_bytes, self.cgroup_peak_bytes or 0)

    @property
    def cgroup(self) -> MemoryCgroup | None:
        """The bot's memory cgroup, if one was created (removed again by ``stop()``)."""
        return self._cgroup

    @property
    def cgroup_peak_bytes(self) -> int | None:
        """The cgroup's own peak charge (includes page cache), when a cgroup was used."""
        return self._cgroup_peak

    @property
    def tasks_refused(self) -> int:
        """How many forks or thread starts the task cap refused (0 without a cap)."""
        if self._closed:  # the cgroups are gone; this is what they said last
            return self._tasks_refused_seen
        if self._task_cgroup is not None:
            return self._task_cgroup.tasks_refused()
        if self.max_tasks is not None and self._cgroup is not None:
            return self._cgroup.tasks_refused()
        return 0

    @property
    def measurement(self) -> str:
        """How memory was measured and enforced, e.g. ``rlimit_data+rss_poll+cgroup_v1``."""
        parts = []
        if self.policy is not None:
            parts.append("rlimit_data")
        parts.append("rss_poll")
        if self._cgroup is not None and self._cgroup_joined:
            parts.append(self._cgroup.parent.label)
        return "+".join(parts)

    @property
    def duration_s(self) -> float:
        """Wall time from launch to exit (or to now)."""
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        return end - self.started_at

    def stderr_bytes(self) -> bytes:
        """The captured output (bounded: head and tail, with a marker for what was dropped)."""
        return self._capture.getvalue() if self._capture else b""

    def stderr_text(self) -> str:
        """The captured output as text."""
        return self._capture.text() if self._capture else ""

    @property
    def stderr_dropped_bytes(self) -> int:
        """How many bytes of output the capture dropped."""
        return self._capture.dropped_bytes if self._capture else 0

    def exit_description(self) -> str:
        """One sentence about how the bot ended, for the game record."""
        if self.running:
            return "still running"
        if self.memory_exceeded and self.policy is not None:
            limit = self.policy.label()
            peak = format_mb(self.peak_bytes)
            if self.memory_verdict == "memory_error":
                return (
                    f"memory limit {limit} exceeded: an allocation was refused "
                    f"(MemoryError, peak {peak})"
                )
            if self.memory_verdict == "cgroup_oom":
                return f"killed: memory limit {limit} exceeded (peak {peak}, killed by the kernel)"
            return f"killed: memory limit {limit} exceeded (peak {peak})"
        rc = self.returncode
        if rc is None:
            return "exit status unknown (reaped by someone else)"
        if self._tasks_refused_seen and self._stop_signal is None:
            return (
                f"{_describe_rc(rc)} after reaching its limit of {self.max_tasks} processes "
                f"and threads ({self._tasks_refused_seen} refused)"
            )
        if self._stop_signal is not None:
            how = "SIGTERM" if self._stop_signal == signal.SIGTERM else "SIGKILL after grace"
            if rc == -self._stop_signal:
                return f"stopped by the referee ({how})"
            return f"{_describe_rc(rc)} after the referee asked it to stop ({how})"
        return _describe_rc(rc)

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

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def kill_now(self) -> None:
        """Synchronous last resort: SIGKILL everything of this bot, remove what can be removed.

        For atexit handlers and cancellation paths; prefer ``await stop()``.
        """
        with self._lock:  # the poller thread may be sampling (and remembering pids) right now
            self._signal_all(signal.SIGKILL)
            if self._tracker is not None:
                self._tracker.sweep(self._cgroup_pids())
        for cg in self._cgroups():
            cg.kill_all()
            for _ in range(50):
                if cg.try_remove():
                    break
                time.sleep(0.01)

    # -- internals ------------------------------------------------------------------------------

    def _cgroups(self) -> list[MemoryCgroup]:
        """The bot's cgroups: its memory one and, on cgroup v1, its ``pids`` one."""
        return [cg for cg in (self._cgroup, self._task_cgroup) if cg is not None]

    def _cgroup_pids(self) -> list[int]:
        """Every process the bot's cgroups hold now."""
        groups = self._cgroups()
        if len(groups) == 1:
            return groups[0].pids()
        return sorted({pid for cg in groups for pid in cg.pids()})

    def _limit_tasks(self, max_tasks: int) -> None:
        """Cap the bot's processes and threads where a ``pids`` cgroup allows it."""
        if self._cgroup is not None and self._cgroup.limit_tasks(max_tasks):
            self.max_tasks = max_tasks
            return
        parent = detect_pids_parent()
        if parent is None:
            return
        try:
            self._task_cgroup = TaskCgroup.create_tasks(parent, max_tasks)
        except OSError as e:
            log.warning("bot runs without a task limit: %s", e)
            return
        self.max_tasks = max_tasks

    def _signal_all(self, sig: int) -> None:
        with self._lock:
            if not self._reaped and self._popen is not None:
                try:
                    if self._pidfd is not None:
                        signal.pidfd_send_signal(self._pidfd, sig)
                    else:
                        self._popen.send_signal(sig)
                except OSError:
                    pass
            if self._tracker is not None:
                self._tracker.signal_others(sig)
            if sig == signal.SIGKILL:
                for cg in self._cgroups():
                    cg.kill_all()

    def _on_output(self) -> None:
        fd = self._out_fd
        if fd is None or self._capture is None:
            return
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._capture.feed(data)
        else:
            self._close_output()

    def _drain_output(self) -> None:
        """Read everything already in the pipe without waiting for writers to close it."""
        while self._out_fd is not None and self._capture is not None:
            try:
                data = os.read(self._out_fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._close_output()
                return
            self._capture.feed(data)

    def _close_output(self) -> None:
        if self._out_fd is not None and self._loop is not None:
            self._loop.remove_reader(self._out_fd)
            os.close(self._out_fd)
            self._out_fd = None

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
            self.returncode = os.waitstatus_to_exitcode(status)
        if self._popen is not None:
            # Tell Popen it is reaped so it never waits or warns about it.
            self._popen.returncode = self.returncode if self.returncode is not None else -1
        if self._cgroup is not None:
            self._cgroup_peak = self._cgroup.peak_bytes()
            if self._cgroup_peak:
                self._cgroup_joined = True  # something was charged to it: the bot joined
        self._tasks_refused_seen = self.tasks_refused
        self._drain_output()
        self._judge_after_exit()
        # The bot is over: its leftovers go now, without grace.
        if self._tracker is not None:
            self._tracker.signal_others(signal.SIGKILL)
        for cg in self._cgroups():
            cg.kill_all()
        self.exited_event.set()
        return True

    def _judge_after_exit(self) -> None:
        if self.policy is None or self.memory_exceeded:
            return
        if self._cgroup is not None and self._cgroup.oom_kills():
            self._mark_exceeded("cgroup_oom")
            return
        if self.peak_rss_bytes > self.policy.limit_bytes:
            self._mark_exceeded("rss")
            return
        rc = self.returncode
        if (
            rc not in (None, 0)
            and self._capture is not None
            and looks_like_memory_error(self._capture.tail_bytes(4096))
        ):
            self._mark_exceeded("memory_error")

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
            extra = self._cgroup_pids()
            if extra and self._cgroup is not None and not self._cgroup_joined:
                self._cgroup_joined = True
            sample = sample_tree(self.pid, extra)
            self._tracker.remember(sample.pids)
            self._peak_tree_rss = max(self._peak_tree_rss, sample.rss_bytes)
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
            self._tracker.sweep(self._cgroup_pids())
            while self._tracker.any_alive() and time.monotonic() < deadline:
                self._tracker.sweep(self._cgroup_pids())
                await asyncio.sleep(0.01)
        self._drain_output()
        self._close_output()
        if self._cgroup is not None and self._cgroup_peak is None:
            self._cgroup_peak = self._cgroup.peak_bytes()
        self._tasks_refused_seen = max(self._tasks_refused_seen, self.tasks_refused)
        for cg in self._cgroups():
            deadline = time.monotonic() + 5.0
            while not cg.remove() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        self._closed = True
        lastresort.unregister(self)


def _describe_rc(rc: int) -> str:
    if rc >= 0:
        return f"exited with code {rc}"
    sig = -rc
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"killed by signal {sig}"
    desc = signal.strsignal(sig)
    return f"killed by signal {name} ({desc.lower()})" if desc else f"killed by signal {name}"


def _resolve(
    program: str, env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None
) -> str:
    """The absolute path exec will run, checked now so a typo fails at start(), not in the bot."""
    if os.sep in program:
        path = Path(program)
        if not path.is_absolute() and cwd is not None:
            path = Path(cwd) / path
        path = path.absolute()
        if not path.exists():
            raise FileNotFoundError(2, "No such file or directory", str(path))
        if not os.access(path, os.X_OK) or path.is_dir():
            raise PermissionError(13, "Not an executable file", str(path))
        return str(path)
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    found = shutil.which(program, path=search)
    if found is None:
        raise FileNotFoundError(2, "No such program on PATH", program)
    return os.path.abspath(found)
