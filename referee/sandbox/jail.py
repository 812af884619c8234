"""The bubblewrap command line that contains one bot (see docs/sandbox.md).

Inside, a bot sees: the system's ``/usr`` (and the ``/bin``, ``/lib`` links), the Python
installation it runs with and its virtualenv, the platform's bot-side packages (``client_sdk``,
``engine``, ``referee.game``) at ``/opt/arena``, all read-only; its own code, copied for this
game, read-only at ``/bots``; a writable scratch of bounded size at ``/tmp`` (also ``HOME``)
and another at ``/dev/shm``; the referee's Unix socket at ``/run/arena/referee.sock`` and its
one-game token in the owner-only file ``/run/arena/token``; its own ``/proc`` and a minimal
``/dev``. Nothing else of the host. New user, PID, network, IPC, UTS and cgroup namespaces, no
capabilities, the seccomp filter of :mod:`referee.sandbox.seccomp`, and an environment from an
allow-list.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from referee.sandbox import seccomp
from referee.sandbox.botcode import INSIDE, PLATFORM, StagedCode, stage_code
from referee.sandbox.identity import HostIdentity, bot_uid
from referee.sandbox.leftovers import run_folder
from referee.sandbox.mirror import PYTHON_INSIDE, Mirror, mirror
from referee.sandbox.venv import VENV_INSIDE, python_inside

__all__ = [
    "DEFAULT_SCRATCH_MB",
    "SOCKET_INSIDE",
    "TOKEN_INSIDE",
    "Jail",
    "build_jail",
    "contained_args",
    "inner_argv",
    "python_roots",
]

SOCKET_INSIDE = "/run/arena/referee.sock"
TOKEN_INSIDE = "/run/arena/token"
SCRATCH_INSIDE = "/tmp"
SHM_INSIDE = "/dev/shm"
PLATFORM_INSIDE = "/opt/arena"
#: The platform's bot-side packages (the SDK, the rules, the course's ``referee.game``).
PLATFORM_PARTS = ("client_sdk", "engine", "referee/__init__.py", "referee/game")
#: Size of the writable scratch (a tmpfs: it counts against the bot's memory cgroup too).
DEFAULT_SCRATCH_MB = 64
#: The user and group the bot runs as inside its user namespace.
INSIDE_ID = "1000"
#: The only host files under /etc a Python bot needs (the dynamic linker's cache, the zone).
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "localtime")
#: Variables copied from the referee's environment when set (none of them a secret).
_ENV_PASSTHROUGH = ("LANG", "LC_ALL", "TZ", "TERM")


@dataclass
class Jail:
    """One bot's sandbox, ready to start: ``argv`` runs bwrap, which runs the bot."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    folder: Path
    code: StagedCode
    #: The host uid/gid bwrap and the bot run as, and what root mounts for them first
    #: (``None``: the referee's own uid, not root).
    run_as: HostIdentity | None = None
    _fds: list[int] = field(default_factory=list)

    def close_fds(self) -> None:
        """Close the referee's copies of the descriptors handed to bwrap (after it started)."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def remove(self) -> None:
        """Close what is still open and delete the per-game copy."""
        self.close_fds()
        shutil.rmtree(self.folder, ignore_errors=True)


def inner_argv(kind: str, value: str, module: str | None = None) -> list[str]:
    """The bot's own command line inside the sandbox (no token on it); ``module``: an SDK
    module run as ``python -m MODULE VALUE`` instead of the SDK's client (an SDK bot only)."""
    if kind == "sdk" and module is not None:
        return [python_inside(), "-m", module, value]
    if kind == "sdk":
        return [
            python_inside(),
            "-m",
            "client_sdk",
            f"--server=unix:{SOCKET_INSIDE}",
            f"--token-file={TOKEN_INSIDE}",
            "--",
            value,
        ]
    # A command bot that wants {token} gets it read from the token file by the shell inside
    # the sandbox, so it is on no command line the referee starts and visible to no other
    # process than the bot's own.
    text = (
        value.replace("{server}", f"unix:{SOCKET_INSIDE}")
        .replace("{token_file}", TOKEN_INSIDE)
        .replace("{token}", f'"$(cat {TOKEN_INSIDE})"')
    )
    simple = not any(ch in text for ch in ";&|\n")
    return ["/bin/sh", "-c", f"exec {text}" if simple else text]


def build_jail(
    kind: str,
    value: str,
    *,
    socket_path: str,
    token: str,
    memory_mb: float | None,
    scratch_mb: int = DEFAULT_SCRATCH_MB,
    exclude: Iterable[Path] = (),
    module: str | None = None,
) -> Jail:
    """Copy the bot's code and assemble its bwrap command line. The caller starts it (with
    ``pass_fds``), then calls :meth:`Jail.close_fds`, and :meth:`Jail.remove` once it is over."""
    folder = run_folder("arena-bot-")  # named for this process: see leftovers.py
    fds: list[int] = []
    uid = bot_uid()
    run_as = HostIdentity(uid) if uid is not None else None
    try:
        (folder / "code").mkdir()
        code = stage_code(kind, value, folder / "code", exclude)
        if socket_path and run_as is not None:
            socket_path = _private_socket(socket_path, folder)
        mounts = _mounts(run_as, folder, scratch_mb)
        if run_as is not None:
            _give(folder, run_as.uid)
        seccomp_fd = _memory_file("arena-seccomp", seccomp.bpf_program())
        fds.append(seccomp_fd)
        token_fd = _memory_file("arena-token", token.encode())
        fds.append(token_fd)
        args = [*_namespaces(), *mounts]
        args += ["--ro-bind", str(folder / "code"), INSIDE]
        if socket_path:  # none for a bot that only loads itself (the load check)
            args += ["--ro-bind", socket_path, SOCKET_INSIDE]
        args += ["--perms", "0400", "--ro-bind-data", str(token_fd), TOKEN_INSIDE]
        args += ["--remount-ro", "/", "--seccomp", str(seccomp_fd), "--chdir", INSIDE]
        # bwrap reads its options from a memory file: its command line (the sandbox's pid 1,
        # which the bot can read) names no host path.
        args_fd = _memory_file("arena-bwrap-args", b"".join(a.encode() + b"\0" for a in args))
        fds.append(args_fd)
        argv = ["bwrap", "--args", str(args_fd), "--", *inner_argv(kind, code.value, module)]
    except BaseException:
        for fd in fds:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    env = _environment(memory_mb, code.on_path)
    return Jail(argv, env, tuple(fds), folder, code, run_as, fds)


def _mounts(run_as: HostIdentity | None, folder: Path, scratch_mb: int) -> list[str]:
    """The system, the scratch, then the Python installation and the platform's packages: the
    scratch is laid before them, so a virtualenv or a checkout under ``/tmp`` stays visible."""

    def source(path: Path) -> str:
        return str(run_as.source(path, folder) if run_as is not None else path)

    args = _system_mounts()
    # Both places a program may write to are tmpfs of the same bounded size: the scratch, and
    # /dev/shm (POSIX shared memory; bwrap's --dev makes it a folder of an unbounded tmpfs).
    for where in (SCRATCH_INSIDE, SHM_INSIDE):
        args += ["--perms", "1777", "--size", str(scratch_mb * 1024 * 1024), "--tmpfs", where]
    for root, host in python_roots():
        args += ["--ro-bind", source(host), str(root)]
    platform = _mirror().platform
    for part in PLATFORM_PARTS:
        args += ["--ro-bind", source(platform / part), f"{PLATFORM_INSIDE}/{part}"]
    return args


def _mirror() -> Mirror:
    return mirror(PLATFORM, PLATFORM_PARTS, PLATFORM_INSIDE)


def _private_socket(socket_path: str, folder: Path) -> str:
    """A hard link to the referee's socket inside the bot's own folder: reachable by the bot's
    uid only (the server's folder stays the referee's). The socket must accept connections from
    any uid that can reach it; only its private folders protect it."""
    link = folder / "referee.sock"
    os.chmod(socket_path, 0o666)
    try:
        os.link(socket_path, link)
    except OSError as exc:
        raise OSError(
            exc.errno, f"cannot give the bot a private link to the referee socket: {exc}"
        ) from exc
    return str(link)


def _give(folder: Path, uid: int) -> None:
    """Make the bot's uid the owner of its per-game folder (mode 0700: no one else's)."""
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            os.chown(Path(root, name), uid, uid, follow_symlinks=False)
    os.chown(folder, uid, uid)
    os.chmod(folder, 0o700)


def contained_args(scratch_mb: int) -> list[str]:
    """The containment every sandboxed program gets (namespaces, no network, the read-only
    system, a bounded ``/tmp``) without a bot's mounts: an upload's build adds its own."""
    scratch = ["--perms", "1777", "--size", str(scratch_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    return [*_namespaces(), *_system_mounts(), *scratch]


def memory_file(name: str, data: bytes) -> int:
    """A descriptor bwrap reads ``data`` from (a memory file, positioned at its start)."""
    return _memory_file(name, data)


def _memory_file(name: str, data: bytes) -> int:
    """A descriptor bwrap reads ``data`` from (a memory file, positioned at its start)."""
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _namespaces() -> list[str]:
    return [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup",
        "--uid",
        INSIDE_ID,
        "--gid",
        INSIDE_ID,
        "--hostname",
        "arena-bot",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/", name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC_FILES:
        path = Path("/etc", name)
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


def python_roots() -> list[tuple[Path, Path]]:
    """The Python installation and virtualenv the bot runs with, unless under /usr: (the path
    inside, the folder mounted there). Both are neutral copies (:mod:`referee.sandbox.mirror`):
    the installation at ``/opt/python``, the virtualenv at ``/opt/venv`` with a ``pyvenv.cfg``
    naming the interpreter there, so neither their mount table entries nor their files tell the
    bot where the checkout, the virtualenv or the home folder lie."""
    copies = _mirror()
    roots = [(Path(PYTHON_INSIDE), copies.python), (Path(VENV_INSIDE), copies.venv)]
    return [(inside, host) for inside, host in roots if host is not None]


def _environment(memory_mb: float | None, module_bot: bool) -> dict[str, str]:
    path = [PLATFORM_INSIDE, INSIDE] if module_bot else [PLATFORM_INSIDE]
    env = {
        "PATH": f"{Path(python_inside()).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": SCRATCH_INSIDE,
        "TMPDIR": SCRATCH_INSIDE,
        "PYTHONPATH": ":".join(path),
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TETROMINO_SERVER": f"unix:{SOCKET_INSIDE}",
        "TETROMINO_TOKEN_FILE": TOKEN_INSIDE,
        "TETROMINO_SANDBOX": "bwrap",
        # One BLAS thread: a bot's threads count against its task cap, and games are fairer.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    if _mirror().python is not None:  # a shared libpython is found by its place inside
        env["LD_LIBRARY_PATH"] = f"{PYTHON_INSIDE}/lib"
    if memory_mb:
        env["TETROMINO_MEMORY_MB"] = f"{memory_mb:g}"
    for name in _ENV_PASSTHROUGH:
        if name in os.environ:
            env[name] = os.environ[name]
    return env
