"""A copy of the platform placed where people clone it: the checkout's packages and a real
virtualenv (its own ``pyvenv.cfg``, interpreter links and package files) under a folder of
the caller's choosing (a private home, ``/tmp``), to run ``referee`` from there.

The virtualenv's packages are hard links to this checkout's (a copy where hard links cannot
be made), leaving out the development tools the referee never imports, so placing it takes a
second or two. Its interpreter is the one this test suite runs on (``sys.base_prefix``: on a
developer machine often a pyenv build under a private home) or, for a user who cannot reach
that one, the system's Python of the same version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from referee.sandbox.identity import reachable

ROOT = Path(__file__).resolve().parents[2]
#: Top-level names in site-packages the referee never imports (big development tools).
_DEV_ONLY = (
    "helm_python",
    "playwright",
    "kubernetes_validate",
    "mypy",
    "pip",
    "grpc_tools",
    "hypothesis",
    "_pytest",
    "ruff",
    "__editable__",
)


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another filesystem
        shutil.copy2(source, target)


def _skipper(top: Path) -> Callable[[str, list[str]], list[str]]:
    """Leave out the development tools at the top of ``top`` (only there)."""

    def skip(folder: str, names: list[str]) -> list[str]:
        if Path(folder) != top:
            return []
        return [n for n in names if n.startswith(_DEV_ONLY) or n == "pytest"]

    return skip


def interpreter_for(other_user: bool) -> str:
    """A base interpreter of this Python's version: this one's, or for ``other_user`` one
    that any user can reach (the system's when this one lies in a private home)."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [base, Path(f"/usr/bin/{base.name}"), Path(f"/usr/local/bin/{base.name}")]
    for candidate in candidates:
        if candidate.is_file() and (not other_user or reachable(candidate.resolve())):
            return str(candidate)
    raise AssertionError(f"no {base.name} here that another user can run")


def as_user(uid: int | None) -> list[str]:
    """The command prefix that runs a program as ``uid`` (no groups), or nothing."""
    if uid is None:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def place(folder: Path, interpreter: str | None = None) -> Path:
    """Copy the platform's packages to ``folder/arena`` with a virtualenv ``.venv`` made by
    ``interpreter`` (default: this one's base); the virtualenv's python."""
    arena = folder / "arena"
    arena.mkdir(parents=True)
    for part in ("client_sdk", "engine", "referee"):
        shutil.copytree(ROOT / part, arena / part, copy_function=_link, ignore=_no_cache)
    venv = arena / ".venv"
    subprocess.run(
        [interpreter or interpreter_for(False), "-m", "venv", "--without-pip", str(venv)],
        check=True,
        timeout=120,
    )
    packages = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    shutil.rmtree(venv / packages)
    here = Path(sys.prefix) / packages
    skip = _skipper(here)
    shutil.copytree(here, venv / packages, symlinks=True, copy_function=_link, ignore=skip)
    return venv / "bin" / "python"


def _no_cache(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__"]


def referee_argv(python: Path, *args: str) -> list[str]:
    """Run the placed copy's referee CLI with its own virtualenv."""
    return [str(python), "-m", "referee.commands.main", *args]


def placed_env(python: Path) -> dict[str, str]:
    """The environment for the placed referee: its checkout first on the path, no CI noise."""
    arena = python.parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return {**env, "PYTHONPATH": str(arena), "HOME": str(arena.parent)}
