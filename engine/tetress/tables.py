"""The placement tables' stored copy: ``tables.bin`` beside this module, made at install.

Building the tables of every placement (``shapes.py``, ``bitboard.py``) costs more CPU than
any other part of a bot's start-up, and every launched bot starts afresh. So their values are
written once, at install (``deploy/install.sh`` calls :func:`write_if_stale`; the referee
also does before it launches bots, where the checkout is writable), and read back with
:mod:`marshal`.

The file is trusted only while it matches the code that defines the tables: it carries the
modification time and size of each module below (as Python's own bytecode cache does), and
:func:`stored` returns ``None`` when any differs, or the file is missing or unreadable; the
tables are then built as before. No pure function here does I/O beyond that one file.
"""

from __future__ import annotations

import marshal
import os
from typing import Any

#: The modules whose code defines the stored tables.
SOURCES = ("geometry.py", "placement.py", "shapes.py", "bitboard.py", "zobrist.py", "tables.py")
FOLDER = os.path.dirname(os.path.abspath(__file__))
FILE = os.path.join(FOLDER, "tables.bin")
#: Bumped when the stored layout changes.
FORMAT = 1


def _stamp(folder: str = FOLDER) -> tuple[Any, ...]:
    stamps: list[Any] = [FORMAT]
    for name in SOURCES:
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            return ()
        stamps.append((name, st.st_mtime_ns, st.st_size))
    return tuple(stamps)


def read(path: str = FILE, folder: str = FOLDER) -> dict[str, Any] | None:
    """The tables stored at ``path`` if they match the code in ``folder``, else ``None``."""
    try:
        with open(path, "rb") as handle:
            stamp, tables = marshal.loads(handle.read())  # one read, not one per object
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not stamp or tuple(stamp) != _stamp(folder) or not isinstance(tables, dict):
        return None
    return tables


_STORED: dict[str, Any] | None = None
_READ = False


def stored(name: str) -> Any:
    """The stored value of table ``name`` (``None``: build it), read once per process."""
    global _STORED, _READ
    if not _READ:
        _STORED, _READ = read(), True
    return None if _STORED is None else _STORED.get(name)


def write(path: str = FILE, folder: str = FOLDER) -> None:
    """Store the tables the modules hold now (built, or read from a matching file), stamped
    with the code in ``folder``."""
    from engine.tetress import bitboard, shapes, zobrist

    tables = {
        "PLACEMENT_MASKS": shapes.PLACEMENT_MASKS,
        "PLACEMENT_CELLS": tuple(p.cells for p in shapes.PLACEMENTS),
        "PLACEMENT_TEXTS": tuple(str(p) for p in shapes.PLACEMENTS),
        "PLACEMENT_KEYS": zobrist.PLACEMENT_KEYS,
        "PLACEMENT_LINES": shapes.PLACEMENT_LINES,
        "PLACEMENT_REPL": bitboard.PLACEMENT_REPL,
        "PLACEMENT_LINES_REPL": bitboard.PLACEMENT_LINES_REPL,
        "CELL_REPL": bitboard._CELL_REPL,
        "ROW_REPL": bitboard._ROW_REPL,
        "ANCHOR_CELL": bitboard.ANCHOR_CELL,
    }
    data = marshal.dumps((_stamp(folder), tables))
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "wb") as handle:
        handle.write(data)
    os.replace(partial, path)  # a bot reading it meanwhile sees the old file or the new


def write_if_stale(path: str = FILE) -> bool:
    """Write the file unless it matches already; whether it is there and matches now."""
    if read(path) is not None:
        return True
    try:
        write(path)
    except OSError:
        return False
    return True
