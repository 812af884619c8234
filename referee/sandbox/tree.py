"""Finding and signalling every process that belongs to one bot."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence

import psutil

__all__ = ["TAG_VARIABLE", "TreeTracker", "find_members"]

#: Environment variable that marks every process of one bot.
TAG_VARIABLE = "TETROMINO_SANDBOX_TAG"


def find_members(sid: int, tag: bytes | None) -> list[int]:
    """Pids of live processes in session ``sid`` or whose environment holds ``tag``.

    Scans /proc once. The environment tag (inherited by every descendant, unlike the session
    or the process group, which a process can leave) finds processes that double-forked out
    of the bot's tree before any poll saw them.
    """
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    me = os.getpid()
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        data = _proc_file(name, "stat")
        if data is None:
            continue
        # Fields after the command name (which may hold spaces and parentheses).
        fields = data[data.rfind(b")") + 2 :].split()
        # state ppid pgrp session ...
        if len(fields) < 4 or fields[0] in (b"Z", b"X"):
            continue
        if int(fields[3]) == sid:
            out.append(int(name))
            continue
        if tag is None:
            continue
        env = _proc_file(name, "environ")
        if env is None:
            continue
        if tag in env.split(b"\0"):
            out.append(int(name))
    return out


def _proc_file(pid: str, name: str) -> bytes | None:
    """``/proc/PID/NAME``, or None when the process is gone or not ours to read."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except OSError:
        return None


class TreeTracker:
    """Remembers every process seen in a bot's tree, so it can be killed even after leaving it.

    A process is remembered as a ``psutil.Process``, which records its start time: signalling
    it later checks that the pid has not been reused by an unrelated process.
    """

    def __init__(self, root_pid: int, tag: str | None = None) -> None:
        self.root_pid = root_pid
        self.tag = f"{TAG_VARIABLE}={tag}".encode() if tag else None
        # The bot leads its own session and process group (start_new_session).
        self.pgid = root_pid
        self._known: dict[int, psutil.Process] = {}
        #: Set once the bot's root is seen in a cgroup it cannot leave (a sandboxed bot has
        #: no cgroup file system): every process of the bot is then a member of that cgroup,
        #: and its member list replaces the scan of every process on the machine.
        self.confined = False

    def _members(self, extra_pids: Sequence[int]) -> list[int]:
        """``extra_pids`` (the cgroup's members), plus the /proc scan unless confined."""
        if self.confined:
            return list(extra_pids)
        return [*extra_pids, *find_members(self.pgid, self.tag)]

    def remember(self, pids: list[int] | tuple[int, ...]) -> None:
        """Record the processes in ``pids`` (except the root, which the owner signals itself)."""
        for pid in pids:
            if pid == self.root_pid or pid in self._known:
                continue
            with contextlib.suppress(psutil.Error):
                self._known[pid] = psutil.Process(pid)

    def known_alive(self) -> list[psutil.Process]:
        """Remembered processes that are still running (same pid and start time, not zombie)."""
        alive: list[psutil.Process] = []
        for pid, p in list(self._known.items()):
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
                    continue
            except psutil.Error:
                pass
            del self._known[pid]
        return alive

    def signal_others(self, sig: int, group: bool = True) -> int:
        """Send ``sig`` to the process group (unless ``group`` is false) and to remembered
        processes outside it. Returns how many remembered processes were signalled.
        """
        if group:
            with contextlib.suppress(OSError):
                os.killpg(self.pgid, sig)
        n = 0
        for p in self.known_alive():
            with contextlib.suppress(psutil.Error):
                p.send_signal(sig)
                n += 1
        return n

    def sweep(self, extra_pids: list[int]) -> list[int]:
        """SIGKILL everything still alive that belongs to the bot; returns the pids hit.

        Besides the group and remembered processes this finds ``extra_pids`` (members of the
        bot's cgroup) and, unless :attr:`confined`, scans for processes still in the bot's
        session or carrying its environment tag (a grandchild orphaned before any poll saw it).
        """
        self.remember(self._members(extra_pids))
        hit = [p.pid for p in self.known_alive()]
        self.signal_others(signal.SIGKILL)
        return hit

    def any_alive(self, extra_pids: Sequence[int] = ()) -> bool:
        """Whether any process of the bot (other than the reaped root) is still running."""
        self.remember(self._members(extra_pids))
        return bool(self.known_alive())
