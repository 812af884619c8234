"""Which isolation a launched bot runs under, and whether this machine can provide it.

``Isolation.BWRAP`` is the sandbox (bubblewrap namespaces + the seccomp filter, see
docs/sandbox.md); ``Isolation.NONE`` runs the bot as a plain supervised process (limits and
cleanup, no containment). :func:`probe` answers once per process whether the sandbox works
here, by starting a real one; :func:`choose` turns the operator's wish into the isolation in
force, and :func:`require_trusted` is the one place that refuses an untrusted bot without it.
"""

from __future__ import annotations

import enum
import functools
import shutil
import subprocess
from dataclasses import dataclass

from referee.errors import RefereeError
from referee.telemetry.logs import get_logger

__all__ = [
    "Isolation",
    "SandboxSupport",
    "SandboxUnavailable",
    "choose",
    "probe",
    "require_trusted",
]

log = get_logger("referee.sandbox.isolation")


class Isolation(enum.StrEnum):
    """How a launched bot is contained; the value is what records and results say."""

    BWRAP = "bwrap"
    NONE = "none"


class SandboxUnavailable(RefereeError, ValueError):
    """An untrusted bot would have to run without the sandbox; the message says why."""


@dataclass(frozen=True, slots=True)
class SandboxSupport:
    """Whether the sandbox runs here; ``reason`` says why not."""

    available: bool
    reason: str = ""


@functools.cache
def probe() -> SandboxSupport:
    """Start one empty sandbox with every namespace and the seccomp filter (cached)."""
    from referee.sandbox import seccomp

    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxSupport(False, "bubblewrap (bwrap) is not installed")
    if not seccomp.seccomp_available():
        return SandboxSupport(False, "the seccomp filter cannot be built (pyseccomp/libseccomp)")
    argv = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--cap-drop", "ALL"]
    argv += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxSupport(False, f"bubblewrap cannot start: {exc}")
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        detail = why[-1] if why else f"exit status {done.returncode}"
        return SandboxSupport(False, f"bubblewrap cannot create namespaces here ({detail})")
    return SandboxSupport(True)


def choose(no_sandbox: bool = False) -> Isolation:
    """The isolation launched bots get: the sandbox where it works, unless the operator
    passed ``--no-sandbox``. Logs a warning (once per call) when bots run uncontained."""
    if no_sandbox:
        log.warning("sandbox_off", reason="--no-sandbox")
        return Isolation.NONE
    support = probe()
    if support.available:
        return Isolation.BWRAP
    log.warning("sandbox_unavailable", reason=support.reason)
    return Isolation.NONE


def require_trusted(isolation: Isolation, trusted: bool, what: str, allow_none: bool) -> None:
    """Refuse to launch an untrusted bot (an upload, another owner's entry) uncontained,
    unless the operator explicitly allowed it (``allow_none``, i.e. ``--no-sandbox``)."""
    if isolation is Isolation.NONE and not trusted and not allow_none:
        reason = probe().reason or "the sandbox is off"
        raise SandboxUnavailable(
            f"refusing to launch {what} without the sandbox ({reason}); "
            "pass --no-sandbox to run it anyway"
        )
