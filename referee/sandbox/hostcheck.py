"""Why the sandbox cannot run on this host, said in one line with the fix.

Shared by :func:`referee.sandbox.isolation.probe` (what a command says when its bots would run
uncontained) and ``referee doctor`` (every check of the host). Each finding is a reason (what
is wrong, named as the kernel or the tool names it) and a fix (what the operator does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Finding",
    "explain_bwrap_failure",
    "first_unreadable",
    "run_sandboxed_python",
    "seccomp_mode",
    "sysctl",
]

#: The seccomp profile shipped for containers (it allows the namespaces bwrap makes).
PROFILE = "deploy/helm/tetromino/files/referee-sandbox.seccomp.json"
#: How a finding about the sandboxed interpreter begins.
PYTHON_FAILURE = "the sandbox cannot start this Python"
#: What the sandboxed interpreter must reach: the SDK, the rules, the course surface and gRPC,
#: each found and its first file read (importing them would cost a bot's whole start-up).
_IMPORTS = (
    "import importlib.util as u\n"
    "for m in ('client_sdk', 'engine', 'referee', 'grpc'):\n"
    "    s = u.find_spec(m)\n"
    "    assert s and s.origin, f'cannot find {m}'\n"
    "    open(s.origin, 'rb').close()"
)


@dataclass(frozen=True, slots=True)
class Finding:
    """What is wrong and what to do about it."""

    reason: str
    fix: str

    def line(self) -> str:
        return f"{self.reason}; {self.fix}"


def sysctl(name: str) -> str | None:
    """A kernel setting by its sysctl name (``kernel.x``); ``None`` where the kernel has none."""
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def seccomp_mode() -> int:
    """This process's seccomp mode (0 none, 2 a filter: e.g. a container runtime's profile)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Seccomp:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def userns_blocker() -> Finding | None:
    """A kernel setting that keeps unprivileged user namespaces from being made, if any."""
    if sysctl("kernel.unprivileged_userns_clone") == "0":
        return Finding(
            "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0)",
            "sysctl -w kernel.unprivileged_userns_clone=1 (and the same line in /etc/sysctl.d/)",
        )
    if sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return Finding(
            "AppArmor restricts unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns=1)",
            "give bwrap an AppArmor profile allowing userns (Ubuntu: apt install "
            "apparmor-profiles, bwrap-userns-restrict) or sysctl -w "
            "kernel.apparmor_restrict_unprivileged_userns=0",
        )
    if sysctl("user.max_user_namespaces") == "0":
        return Finding(
            "user namespaces are disabled (user.max_user_namespaces=0)",
            "sysctl -w user.max_user_namespaces=15000",
        )
    return None


def explain_bwrap_failure(detail: str) -> Finding:
    """Why bwrap could not make its namespaces (``detail``: its last line of error)."""
    blocker = userns_blocker()
    if blocker is not None:
        return blocker
    if seccomp_mode() == 2 and "not permitted" in detail.lower():
        return Finding(
            f"this process runs under a seccomp filter that refuses the namespaces bwrap "
            f"makes, as a container runtime's default profile does ({detail})",
            f"run the container with the profile {PROFILE} (see deploy/README.md)",
        )
    return Finding(
        f"bubblewrap cannot create namespaces here ({detail})",
        "run `referee doctor` to see which check fails (docs/sandbox.md)",
    )


def run_sandboxed_python(timeout: float = 60.0) -> Finding | None:
    """Start the interpreter bots run with, in a real sandbox as a bot's uid, importing the
    platform's bot-side packages; ``None`` when it works, else what kept it from working."""
    import shlex

    from referee.sandbox.jail import build_jail
    from referee.sandbox.spawn import resolve_program, spawn_shim

    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(_IMPORTS)}"
    jail = build_jail("command", command, socket_path="", token="", memory_mb=None)
    try:
        proc = spawn_shim(
            resolve_program(jail.argv[0], None, None),
            jail.argv,
            data_bytes=0,
            cgroup_procs=(),
            env=jail.env,
            cwd="/",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=jail.pass_fds,
            run_as=jail.run_as,
        )
        jail.close_fds()
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return Finding(f"Python did not start in the sandbox within {timeout:g} s", "retry")
    finally:
        jail.remove()
    if proc.returncode == 0:
        return None
    lines = err.decode(errors="replace").strip().splitlines()
    return _python_failure(lines[-1] if lines else f"exit status {proc.returncode}")


def _python_failure(detail: str) -> Finding:
    lowered = detail.lower()
    namespaces = ("namespace", "not permitted", "uid map", "setting up")
    if detail.startswith("bwrap:") and (
        userns_blocker() is not None or any(word in lowered for word in namespaces)
    ):
        return explain_bwrap_failure(detail)  # the bots' uid may not make namespaces
    who = "the bots' uids" if os.geteuid() == 0 else "this user"
    hidden = first_unreadable() if os.geteuid() == 0 else None
    if hidden is not None:
        detail = f"{detail}; {hidden} is not readable by other users"
    return Finding(
        f"{PYTHON_FAILURE} ({sys.executable}) with the platform's packages ({detail})",
        f"make the Python installation, the virtualenv and the checkout readable by {who} "
        "(chmod -R o+rX on them, or reinstall with umask 022)",
    )


def first_unreadable() -> Path | None:
    """The first folder or file of the Python installation, the virtualenv or the platform's
    packages that other users cannot read (what a bot's uid is), if any."""
    import stat

    from referee.sandbox.botcode import PLATFORM
    from referee.sandbox.jail import PLATFORM_PARTS, python_roots

    tops = [host for _, host in python_roots()] + [PLATFORM / p for p in PLATFORM_PARTS]
    for top in tops:
        for folder, dirs, files in os.walk(top):
            for name in [*dirs, *files]:
                path = Path(folder, name)
                try:
                    mode = path.lstat().st_mode
                except OSError:
                    continue
                need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
                if not stat.S_ISLNK(mode) and mode & need != need:
                    return path
    return None
