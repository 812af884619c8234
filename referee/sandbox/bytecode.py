"""The platform's bot-side packages compiled to bytecode before bots start.

A sandboxed bot sees ``client_sdk``, ``engine`` and ``referee.game`` read-only and writes no
bytecode (``PYTHONDONTWRITEBYTECODE``), so whatever of them has no up-to-date ``__pycache__``
on the host is compiled again by every bot at every start (about 60 ms of CPU a bot). The
referee compiles them once per process, before its first launch, where the checkout is
writable; the bot then reads the same read-only ``.pyc`` files any Python would. Python checks
each against its source's time stamp and size, which the read-only mount keeps, so an edited
file is compiled again (here, at the next referee start), never run stale. The Tetress
placement tables' file (``engine/tetress/tables.bin``) is brought up to date the same way.
"""

from __future__ import annotations

import compileall
import functools
import os
from pathlib import Path

from referee.telemetry.logs import get_logger

__all__ = ["compile_platform"]

log = get_logger("referee.sandbox.bytecode")


@functools.cache
def compile_platform(root: Path, parts: tuple[str, ...]) -> bool:
    """Compile the ``parts`` (folders or files) under ``root`` where their bytecode is missing
    or stale; whether all of it is up to date now. Once per process and ``parts``; a checkout
    the referee cannot write is left as it is (its bots compile in memory, as before)."""
    done = True
    for part in parts:
        path = root / part
        if not os.access(path.parent if path.is_file() else path, os.W_OK):
            done = False
            continue
        try:
            if path.is_dir():
                done &= bool(compileall.compile_dir(path, quiet=2, workers=1))
            else:
                done &= bool(compileall.compile_file(path, quiet=2))
        except OSError as exc:
            log.info("bytecode not written", path=str(path), error=str(exc))
            done = False
    if "engine" in parts:
        done &= _store_tables(root)
    return done


def _store_tables(root: Path) -> bool:
    """Write the Tetress placement tables' file (:mod:`engine.tetress.tables`) where it is
    missing or stale, as ``install.sh`` does: bots read it instead of building the tables.
    Only for the checkout this process runs (the tables written are the ones it holds)."""
    from engine.tetress import tables

    if not Path(tables.FOLDER).resolve().is_relative_to(root.resolve()):
        return False
    return tables.write_if_stale()
