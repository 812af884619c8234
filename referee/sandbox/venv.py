"""The referee's virtualenv as a sandboxed bot sees it: mounted at ``/opt/venv``, since its host
path would tell the bot where the referee is installed (docs/sandbox.md)."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["VENV_INSIDE", "inside", "python_inside", "venv"]

VENV_INSIDE = "/opt/venv"


def venv() -> Path | None:
    """The virtualenv the referee runs in (``None``: none, or one under /usr)."""
    prefix = Path(sys.prefix)
    if sys.prefix == sys.base_prefix or prefix.resolve().is_relative_to("/usr"):
        return None
    return prefix


def inside(path: str) -> str:
    """``path`` as seen inside the sandbox: moved to VENV_INSIDE when in the virtualenv (as
    written, links not followed), else unchanged."""
    root = venv()
    if root is not None and path.startswith("/"):
        for form in {root, root.resolve()}:
            if Path(path).is_relative_to(form):
                rest = Path(path).relative_to(form).as_posix()
                return VENV_INSIDE if rest == "." else f"{VENV_INSIDE}/{rest}"
    return path


def python_inside() -> str:
    """The Python executable as the bot runs it: in the virtualenv at VENV_INSIDE, else in
    the installation at PYTHON_INSIDE unless it is the system's (referee.sandbox.mirror)."""
    from referee.sandbox.mirror import PYTHON_INSIDE

    if venv() is not None:
        return inside(sys.executable)
    base = Path(sys.base_prefix).resolve()
    executable = Path(sys.executable).resolve()
    if base.is_relative_to("/usr") or not executable.is_relative_to(base):
        return sys.executable
    return f"{PYTHON_INSIDE}/{executable.relative_to(base).as_posix()}"
