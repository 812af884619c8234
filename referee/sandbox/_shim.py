"""Exec shim: applies the sandbox to itself, then becomes the bot.

Run as ``python -S -E -s _shim.py DATA_BYTES CGROUP_PROCS|- UID|- STAGE|- NICE|- PARENT_PID
EXECUTABLE ARGV0 ...``, where CGROUP_PROCS is one or more ``cgroup.procs`` paths separated by
newlines (the memory cgroup, and on cgroup v1 the ``pids`` and ``cpuacct`` ones), UID, when given,
the unprivileged uid and gid to become once the cgroups are joined (see ``identity.py``), and
STAGE, when given, newline-separated pairs of lines SOURCE and TARGET: host folders or files the
bot's uid cannot reach (a checkout or Python installation in a private home) that root bind-mounts,
read-only, onto TARGET (a stage point in the bot's own folder) in a mount namespace of the bot's
own, before becoming UID. bwrap, started as UID, then mounts the stage points where they are seen.
NICE, when given, is the niceness the bot runs at (set before any of its processes starts, so all
of them inherit it; see ``priority.py``).

Why a shim rather than ``preexec_fn``: the referee is a gRPC server with native threads, and
``preexec_fn`` forces a plain fork() that runs Python code (and pthread_atfork handlers) in the
child of a multi-threaded process. Without it, subprocess uses vfork(), which is safe and fast.
The shim costs one small interpreter start (about 8 ms) and is replaced by the bot on exec, so
the limits are in place before any bot code runs and nothing is left to race.

Kept to the standard library's builtin modules: ``site`` is not even imported.
"""

import os
import resource
import sys

# Loaded with the shim, before the cgroups are joined (see main).
try:
    import ctypes
except ImportError:  # a Python built without ctypes: no parent-death signal, no staging
    ctypes = None  # type: ignore[assignment]

_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 32, 4096
_MS_REC, _MS_PRIVATE = 16384, 1 << 18


def _stage(pairs: list[str], libc: ctypes.CDLL | None) -> None:
    """Bind each SOURCE read-only on its TARGET in a new mount namespace (root only)."""
    if libc is None:
        os.write(2, b"sandbox: cannot stage the bot's mounts without ctypes\n")
        os._exit(126)

    def check(result: int, what: str) -> None:
        if result != 0:
            error = os.strerror(ctypes.get_errno())
            os.write(2, f"sandbox: cannot {what}: {error}\n".encode())
            os._exit(126)

    check(libc.unshare(_CLONE_NEWNS), "make the bot's mount namespace")
    check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "make its mounts private")
    for source, target in zip(pairs[0::2], pairs[1::2], strict=True):
        src, dst = os.fsencode(source), os.fsencode(target)
        check(libc.mount(src, dst, None, _MS_BIND | _MS_REC, None), f"bind {source}")
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
        check(libc.mount(None, dst, None, flags, None), f"make {source} read-only")


def _libc() -> ctypes.CDLL | None:
    """The C library through ctypes (``None`` where ctypes cannot load it)."""
    if ctypes is None:
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def main() -> None:
    data_bytes, procs_file, uid, stage, nice, parent_pid, executable, *argv = sys.argv[1:]
    # What the bot is charged (CPU, memory) counts from the cgroups' join: the sandbox's own
    # start-up before it is not the bot's. So the C library (for the parent-death signal and
    # the stage; about 3 ms of CPU) is loaded, and the stage's mount namespace made, first.
    libc = _libc()
    if stage != "-":
        _stage(stage.split("\n"), libc)
    for path in procs_file.split("\n") if procs_file != "-" else ():
        try:
            with open(path, "w") as f:
                f.write(str(os.getpid()))
        except OSError as e:
            # Not fatal: the referee notices the bot is not in its cgroup and says so.
            os.write(2, f"sandbox: could not join cgroup {path}: {e}\n".encode())
    limit = int(data_bytes)
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    # No core files from crashing bots (slow, and they would land in the bot's directory).
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nice != "-":
        # Before the uid changes: root may also give a priority back (a lower niceness).
        try:
            os.setpriority(os.PRIO_PROCESS, 0, int(nice))
        except OSError as e:
            os.write(2, f"sandbox: could not set niceness {nice}: {e}\n".encode())
    if uid != "-":
        # Before the parent-death signal: changing credentials clears it.
        os.setgroups([])
        os.setresgid(int(uid), int(uid), int(uid))
        os.setresuid(int(uid), int(uid), int(uid))
    try:
        # If the referee dies without cleaning up (SIGKILL), the kernel kills the bot.
        pr_set_pdeathsig = 1
        if libc is not None:
            libc.prctl(pr_set_pdeathsig, 9, 0, 0, 0)
    except AttributeError:  # a C library without prctl
        pass
    if os.getppid() != int(parent_pid):
        os._exit(125)  # the referee is already gone
    try:
        os.execv(executable, argv)
    except OSError as e:
        os.write(2, f"sandbox: cannot run {executable}: {e}\n".encode())
        os._exit(127)


main()
