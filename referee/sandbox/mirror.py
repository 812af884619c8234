"""Neutral copies of what a sandboxed bot runs with: the Python installation, the virtualenv's
packages and the platform's bot-side packages, as hard links (a copy across file systems)
under one folder whose path names nothing of the host (docs/sandbox.md, "Host paths").

Why copies: a bind mount's entry in ``/proc/self/mountinfo`` names its source's path within
its file system, so binding the checkout, the virtualenv or a pyenv Python straight into the
sandbox shows a bot where they live, whatever path they are mounted at. A hard link is a name
of its own, so a bind from here shows only this folder. Each copy is keyed by what it was
made from (paths, modification times, file sizes): a change makes a new one, an unchanged one
is shared by every referee process, and concurrent makers each finish their own and keep the
first that lands (rename is atomic).

The platform's copy also holds what a bot would otherwise compute at every start from those
sources: their bytecode, and the Tetress placement tables' file (:mod:`engine.tetress.tables`,
stamped with the copied modules, which keep their sources' times and sizes).
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["PYTHON_INSIDE", "Mirror", "mirror"]

#: Where the Python installation is mounted inside (when it is not the system's, under /usr).
PYTHON_INSIDE = "/opt/python"
#: The mirrors' home when the referee may create it (root); else a folder of its user's.
SYSTEM_BASE = Path("/var/lib/tetromino-arena/sandbox-root")
#: Left out of the virtualenv's copy: records of where packages were installed from (an
#: editable install's finder and link name the checkout).
_SKIPPED = ("__editable__", "direct_url.json")
#: Part of the platform copy's key: raised when what a copy holds besides the sources changes,
#: so that copies made before are not reused (2: the Tetress tables' file).
_PLATFORM_LAYOUT = 2


class Mirror:
    """One mirror: the folders to bind (``python``: ``None`` when it is the system's)."""

    def __init__(self, python: Path | None, venv: Path | None, platform: Path) -> None:
        self.python = python
        self.venv = venv
        self.platform = platform


def base() -> Path:
    """The folder holding every mirror (searchable by any user: bots run as other uids)."""
    for where in (SYSTEM_BASE, Path("/var/tmp", f"tetromino-arena-sandbox-{os.geteuid()}")):
        with contextlib.suppress(OSError):
            where.mkdir(parents=True, exist_ok=True)
            for folder in (where, *where.parents):
                if folder == Path("/") or folder.stat().st_mode & 0o011 == 0o011:
                    break
                folder.chmod(folder.stat().st_mode | 0o011)
            if os.access(where, os.W_OK | os.X_OK):
                return where
    raise OSError("no folder for the sandbox's neutral copies (/var/lib or /var/tmp)")


@functools.lru_cache(maxsize=4)
def mirror(platform_root: Path, parts: tuple[str, ...], inside: str) -> Mirror:
    """The mirror of this process's Python, virtualenv and ``parts`` of ``platform_root``
    (mounted at ``inside``), made when missing (once per process: later changes show after a
    restart)."""
    home = base()
    python = Path(sys.base_prefix).resolve()
    venv = Path(sys.prefix).resolve() if sys.prefix != sys.base_prefix else None
    python_copy = None
    if not python.is_relative_to("/usr"):
        python_copy = _made(home, "python", [python], lambda to: _link_tree(python, to))
    venv_copy = None
    if venv is not None:
        packages = Path(sysconfig.get_path("purelib"))
        venv_copy = _made(
            home, "venv", [venv, packages], lambda to: _venv_copy(venv, to, python_copy)
        )
    files = [platform_root / p for p in parts]
    platform = _made(
        home,
        "platform",
        _walk(files),
        lambda to: _platform_copy(files, parts, to, inside),
        salt=f"layout {_PLATFORM_LAYOUT}",
    )
    return Mirror(python_copy, venv_copy, platform)


def _walk(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        out.append(path)
        if path.is_dir():
            out += sorted(
                p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            )
    return out


def _made(
    home: Path, kind: str, sources: list[Path], make: Callable[[Path], None], salt: str = ""
) -> Path:
    """``home/<kind>-<key>``, made by ``make(folder)`` unless already there."""
    digest = hashlib.sha256(sys.version.encode() + salt.encode())
    for path in sources:
        st = path.stat()
        digest.update(f"{path}\0{st.st_mtime_ns}\0{st.st_size}\0{st.st_ino}\n".encode())
    final = home / f"{kind}-{digest.hexdigest()[:20]}"
    if final.is_dir():
        return final
    work = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=home))
    try:
        make(work)
        work.chmod(0o755)
        os.rename(work, final)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
        if not final.is_dir():
            raise
    return final


def _link(source: str, target: str) -> None:
    """A hard link when the file system allows it, else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _link_tree(source: Path, target: Path, skip: tuple[str, ...] = ()) -> None:
    shutil.copytree(
        source,
        target,
        symlinks=True,
        copy_function=_link,
        dirs_exist_ok=True,
        ignore=lambda _, names: [n for n in names if n.startswith(skip)] if skip else [],
    )


def _venv_copy(venv: Path, target: Path, python_copy: Path | None) -> None:
    """The virtualenv's ``lib`` (its packages), a ``pyvenv.cfg`` naming the interpreter at its
    place inside, and ``bin/python*`` links to it; none of its scripts (their first lines
    name the host path)."""
    for name in ("lib", "lib64"):
        if (venv / name).is_dir() and not (venv / name).is_symlink():
            _link_tree(venv / name, target / name, _SKIPPED)
        elif (venv / name).is_symlink():
            os.symlink(os.readlink(venv / name), target / name)
    real = Path(sys._base_executable).resolve()  # type: ignore[attr-defined]
    inside = f"{PYTHON_INSIDE}/bin/{real.name}" if python_copy is not None else str(real)
    (target / "pyvenv.cfg").write_text(
        f"home = {Path(inside).parent}\ninclude-system-site-packages = false\n"
        f"version = {'.'.join(map(str, sys.version_info[:3]))}\n"
    )
    (target / "bin").mkdir()
    for name in {"python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}"}:
        os.symlink(inside, target / "bin" / name)


def _platform_copy(files: list[Path], parts: tuple[str, ...], target: Path, inside: str) -> None:
    """The parts' sources, compiled here under their names inside (so their bytecode names
    no host path either; bots read it, never write it)."""
    for part, source in zip(parts, files, strict=True):
        (target / part).parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            _link_tree(source, target / part, ("__pycache__",))
            compileall.compile_dir(target / part, quiet=2, workers=1, ddir=f"{inside}/{part}")
        else:
            _link(str(source), str(target / part))
            compileall.compile_file(target / part, quiet=2, ddir=str(Path(inside, part).parent))
    _store_tables(files, parts, target)


def _store_tables(files: list[Path], parts: tuple[str, ...], target: Path) -> None:
    """The Tetress placement tables' file in the copy of ``engine`` (bots read it instead of
    building the tables), when ``engine`` is copied from the checkout this process runs (the
    tables written are the ones it holds); without it bots build them, as before."""
    from engine.tetress import tables

    if "engine" not in parts:
        return
    source = files[parts.index("engine")]
    folder = target / "engine" / "tetress"
    if Path(tables.FOLDER).resolve() != (source / "tetress").resolve():
        return
    if tables.read(str(folder / "tables.bin"), str(folder)) is None:
        tables.write(str(folder / "tables.bin"), str(folder))
