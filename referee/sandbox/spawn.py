"""Starting a bot's process through the exec shim (see ``_shim.py`` for why a shim)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.sandbox.identity import HostIdentity

__all__ = ["resolve_program", "shim_argv", "spawn_shim"]

_SHIM = str(Path(__file__).with_name("_shim.py"))


def spawn_shim(
    executable: str,
    argv: Sequence[str],
    *,
    data_bytes: int,
    cgroup_procs: Sequence[str],
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None,
    stdout: int | None,
    stderr: int,
    pass_fds: Sequence[int],
    run_as: HostIdentity | None = None,
    niceness: int | None = None,
) -> subprocess.Popen[bytes]:
    """Run ``argv`` (``executable``) under the shim: it joins ``cgroup_procs``, sets
    RLIMIT_DATA to ``data_bytes`` (0: none), mounts what ``run_as`` stages, sets
    ``niceness`` (``None``: the referee's, inherited), becomes ``run_as``'s uid/gid if given,
    and execs. A new session, stdin from /dev/null."""
    return subprocess.Popen(
        shim_argv(executable, argv, data_bytes, cgroup_procs, run_as, niceness),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )


def shim_argv(
    executable: str,
    argv: Sequence[str],
    data_bytes: int,
    cgroup_procs: Sequence[str],
    run_as: HostIdentity | None,
    niceness: int | None = None,
) -> list[str]:
    """The command line that runs ``argv`` under the shim (see :func:`spawn_shim`)."""
    return [
        sys.executable,
        "-S",
        "-E",
        "-s",
        _SHIM,
        str(data_bytes),
        "\n".join(cgroup_procs) or "-",
        "-" if run_as is None else str(run_as.uid),
        "-" if run_as is None or not run_as.stage else run_as.stage_argument(),
        "-" if niceness is None else str(niceness),
        str(os.getpid()),
        executable,
        *argv,
    ]


def resolve_program(
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
