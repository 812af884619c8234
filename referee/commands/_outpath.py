"""Output files the commands write (``--record``, ``-o``): checked before the work starts, so a
typo in a path costs one line, not a whole game or an hour of annotation and a traceback."""

from __future__ import annotations

import os
from pathlib import Path

#: The spelling of standard output for ``-o``.
STDOUT = "-"


def output_problem(target: str) -> str | None:
    """Why ``target`` cannot be written, in a few words naming it; ``None`` when it can (or is
    ``-``, standard output). Nothing is created: the file appears only when the work is done."""
    if target == STDOUT:
        return None
    path = Path(target)
    if path.is_dir():
        return f"{target} is a directory; give a file name"
    parent = path.parent
    if not parent.exists():
        return f"{target}: the folder {parent} does not exist"
    if not parent.is_dir():
        return f"{target}: {parent} is not a folder"
    if path.exists():
        if not os.access(path, os.W_OK):
            return f"{target}: not writable (permission denied)"
    elif not os.access(parent, os.W_OK | os.X_OK):
        return f"{target}: cannot create a file in {parent} (permission denied)"
    return None


def write_problem(target: str, error: OSError) -> str:
    """One line for a write that failed anyway (disk full, a folder removed meanwhile)."""
    return f"cannot write {target}: {error.strerror or error}"
