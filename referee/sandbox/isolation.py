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
    """Whether the sandbox runs here; ``reason`` says why not and ``fix`` what to do."""

    available: bool
    reason: str = ""
    fix: str = ""

    @property
    def line(self) -> str:
        """Why not and what to do, in one line (empty when it runs)."""
        return f"{self.reason}; {self.fix}" if self.fix else self.reason


@functools.cache
def probe() -> SandboxSupport:
    """Start one empty sandbox with every namespace, then the interpreter bots run with in a
    real sandbox as a bot would be (its uid, its mounts), importing the platform's packages
    (cached: once per process)."""
    from referee.sandbox import hostcheck, seccomp

    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxSupport(
            False,
            "bubblewrap (bwrap) is not installed",
            "apt-get install bubblewrap (or put bwrap on PATH)",
        )
    if not seccomp.seccomp_available():
        return SandboxSupport(
            False,
            "the seccomp filter cannot be built (pyseccomp/libseccomp)",
            "apt-get install libseccomp2, then pip install pyseccomp in the referee's venv",
        )
    argv = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--cap-drop", "ALL"]
    argv += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxSupport(False, f"bubblewrap cannot start: {exc}", "run `referee doctor`")
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        found = hostcheck.explain_bwrap_failure(why[-1] if why else f"exit {done.returncode}")
        return SandboxSupport(False, found.reason, found.fix)
    try:
        broken = hostcheck.run_sandboxed_python()
    except OSError as exc:
        broken = hostcheck.Finding(f"the sandbox cannot be prepared ({exc})", "see docs/sandbox.md")
    if broken is not None:
        return SandboxSupport(False, broken.reason, broken.fix)
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
    log.warning("sandbox_unavailable", reason=support.reason, fix=support.fix)
    return Isolation.NONE


def require_trusted(isolation: Isolation, trusted: bool, what: str, allow_none: bool) -> None:
    """Refuse to launch an untrusted bot (an upload, another owner's entry) uncontained,
    unless the operator explicitly allowed it (``allow_none``, i.e. ``--no-sandbox``)."""
    if isolation is Isolation.NONE and not trusted and not allow_none:
        reason = probe().line or "the sandbox is off"
        raise SandboxUnavailable(
            f"refusing to launch {what} without the sandbox ({reason}); "
            "or pass --no-sandbox to run it anyway"
        )
