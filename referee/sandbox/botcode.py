"""A fresh per-game copy of a bot's own code, for the sandbox to mount read-only at ``/bots``.

What is copied, by kind of bot:

* a package directory or a Python file: it, plus every package or module lying beside it
  (in the same parent folder) that its code imports by name, found by reading the code's
  ``import`` statements (a course bot's helper package shipped beside it, with or without an
  ``__init__.py``); never a folder another bot of the same game was launched from;
* an importable module that is not part of the platform: its top-level package or module;
* a shell command: every file or folder its words name (absolute, or relative to the
  referee's working directory) that is not a system or Python installation path.

The copy keeps symbolic links as links (a link to a host file leads nowhere inside the
sandbox) and refuses special files and anything over :data:`CODE_LIMIT_BYTES`.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os
import shlex
import shutil
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.sandbox.venv import inside

__all__ = ["CODE_LIMIT_BYTES", "INSIDE", "StagedCode", "bot_roots", "stage_code"]

#: Where the copy is mounted inside the sandbox.
INSIDE = "/bots"
#: The most bot code copied for one game (all files together).
CODE_LIMIT_BYTES = 64 * 1024 * 1024
_SKIP = shutil.ignore_patterns("__pycache__", ".git", "*.pyc")
#: The platform's own packages, mounted read-only for every bot rather than copied.
PLATFORM = Path(__file__).resolve().parents[2]


@dataclass
class StagedCode:
    """The bot's code copied under ``folder``; ``value`` is the spec as seen inside."""

    folder: Path
    value: str
    copied: list[str] = field(default_factory=list)
    #: Whether ``/bots`` must be on the bot's PYTHONPATH (a module bot).
    on_path: bool = False


def split_target(value: str) -> tuple[str, str]:
    """``path/to/bot:Class`` -> (``path/to/bot``, ``:Class``), as the SDK's loader splits it."""
    head, sep, tail = value.rpartition(":")
    if sep and tail.isidentifier() and head:
        return head, f":{tail}"
    return value, ""


def bot_roots(kind: str, value: str) -> list[Path]:
    """The folders a bot is launched from (so other bots' copies can leave them out)."""
    if kind != "sdk":
        return []
    target = Path(split_target(value)[0])
    if target.is_dir():
        return [target.resolve()]
    return [target.resolve()] if target.is_file() else []


def stage_code(kind: str, value: str, folder: Path, exclude: Iterable[Path] = ()) -> StagedCode:
    """Copy the bot's code into ``folder`` (which must exist and be empty)."""
    copier = _Copier(folder, {p.resolve() for p in exclude})
    if kind == "sdk":
        return _stage_sdk(value, copier)
    return _stage_command(value, copier)


def _stage_sdk(value: str, copier: _Copier) -> StagedCode:
    target, suffix = split_target(value)
    path = Path(target)
    if path.exists():
        name = copier.copy(path.resolve())
        copier.copy_imported_siblings(path.resolve())
        return StagedCode(copier.folder, f"{INSIDE}/{name}{suffix}", copier.copied)
    top = target.split(".", 1)[0]
    found = importlib.util.find_spec(top)
    origin = _module_root(found)
    if origin is None or _is_platform(origin):
        return StagedCode(copier.folder, value, copier.copied)
    copier.copy(origin)
    return StagedCode(copier.folder, value, copier.copied, on_path=True)


def imported_names(kind: str, value: str) -> set[str] | None:
    """The top-level names a bot's own code imports by name (its file or package, and the
    helpers beside it that it imports, as :func:`stage_code` finds them); ``None`` when that
    cannot be read (a shell command, a module not found)."""
    if kind != "sdk":
        return None
    target = split_target(value)[0]
    source = Path(target).resolve() if Path(target).exists() else _module_source(target)
    if source is None:
        return None
    names: set[str] = set()
    queue, seen = [source], {source}
    while queue:
        found = _imported_names(queue.pop())
        names |= found
        for name in found:
            sibling = _sibling(source.parent, name)
            if sibling is not None and sibling not in seen and sibling.parent == source.parent:
                seen.add(sibling)
                queue.append(sibling)
    return names


def _module_source(name: str) -> Path | None:
    """The file (or package folder) of module ``name``, found without importing anything (a
    parent package's ``__init__`` is the bot's code too: it must not run in the referee)."""
    top, *rest = name.split(".")
    try:
        found = _module_root(importlib.util.find_spec(top)) if top.isidentifier() else None
    except (ImportError, ValueError):
        return None
    for part in rest:
        if found is None or not found.is_dir():
            return None
        package, module = found / part, found / f"{part}.py"
        found = package if package.is_dir() else module if module.is_file() else None
    return found


def _module_root(spec: importlib.machinery.ModuleSpec | None) -> Path | None:
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    origin = Path(spec.origin).resolve()
    return origin.parent if origin.name == "__init__.py" else origin


def _exists(path: Path) -> bool:
    """Whether ``path`` names something; a word too long to be a path (ENAMETOOLONG) is not."""
    try:
        return path.exists()
    except OSError:
        return False


def _is_platform(path: Path) -> bool:
    if any(path.is_relative_to(PLATFORM / part) for part in ("client_sdk", "engine", "referee")):
        return True
    return any(path.is_relative_to(p) for p in _system_roots())


def _system_roots() -> list[Path]:
    import sys

    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    roots.update(Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/dev"))
    return [r.resolve() for r in roots]


def _stage_command(value: str, copier: _Copier) -> StagedCode:
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    text = value
    for word in sorted(set(words), key=len, reverse=True):
        if "{" in word or not word or word.startswith("-"):
            continue
        path = Path(word)
        if not _exists(path):
            continue
        if (moved := inside(word)) != word:  # the virtualenv's place inside
            text = text.replace(word, shlex.quote(moved))
            continue
        if _is_platform(path.resolve()):
            continue
        resolved = path.resolve()
        if resolved == Path("/") or resolved == Path.cwd().resolve():
            continue  # never the referee's whole folder
        name = copier.copy(resolved)
        text = text.replace(word, shlex.quote(f"{INSIDE}/{name}"))
    return StagedCode(copier.folder, text, copier.copied)


class _Copier:
    def __init__(self, folder: Path, exclude: set[Path]) -> None:
        self.folder = folder
        self.exclude = exclude
        self.copied: list[str] = []
        self.total = 0
        self._done: set[Path] = set()

    def copy(self, source: Path) -> str:
        """Copy a file or folder into the staging folder; its name there."""
        name = source.name or "bot"
        while (self.folder / name).exists():
            name = f"_{name}"
        if source.is_dir():
            self._check_tree(source)
            shutil.copytree(source, self.folder / name, symlinks=True, ignore=_SKIP)
        else:
            self._check_file(source)
            shutil.copy2(source, self.folder / name, follow_symlinks=False)
        self._done.add(source)
        self.copied.append(str(source))
        return name

    def copy_imported_siblings(self, source: Path) -> None:
        """Copy the packages beside ``source`` that its code imports, and theirs in turn."""
        parent = source.parent
        queue = [source]
        while queue:
            for name in _imported_names(queue.pop()):
                sibling = _sibling(parent, name)
                if sibling is None or sibling in self._done or sibling in self.exclude:
                    continue
                if sibling == parent or parent.is_relative_to(sibling):
                    continue
                self.copy(sibling)
                queue.append(sibling)

    def _check_file(self, path: Path) -> None:
        mode = path.lstat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise ValueError(f"bot code {path}: not a regular file")
        self._count(path.lstat().st_size, path)

    def _check_tree(self, root: Path) -> None:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git")]
            for name in files:
                if not name.endswith(".pyc"):
                    self._check_file(Path(folder, name))

    def _count(self, size: int, path: Path) -> None:
        self.total += size
        if self.total > CODE_LIMIT_BYTES:
            raise ValueError(
                f"bot code {path}: more than {CODE_LIMIT_BYTES // (1024 * 1024)} MB to copy"
            )


def _sibling(parent: Path, name: str) -> Path | None:
    """What ``import name`` finds beside a bot, as Python does with ``parent`` on its path: a
    package, a module, else a folder without ``__init__.py`` (a namespace package, as course
    bots ship their ``utils/``), unless a module of that name is found elsewhere (the standard
    library, an installed package), which Python prefers to a namespace folder."""
    package = parent / name
    if (package / "__init__.py").is_file():
        return package.resolve()
    module = parent / f"{name}.py"
    if module.is_file():
        return module.resolve()
    if package.is_dir() and name.isidentifier() and not _found_elsewhere(name, parent):
        return package.resolve()
    return None


def _found_elsewhere(name: str, parent: Path) -> bool:
    """Whether ``name`` is a regular module or package outside ``parent`` (and the cwd)."""
    import sys

    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    here = {"", str(parent), os.getcwd()}
    path = [p for p in sys.path if p not in here]
    found = importlib.machinery.PathFinder.find_spec(name, path)
    return found is not None and found.origin is not None


def _imported_names(source: Path) -> set[str]:
    """Top-level names of the absolute imports in ``source`` (a file or a package folder)."""
    files: Sequence[Path] = [source] if source.is_file() else sorted(source.rglob("*.py"))
    names: set[str] = set()
    for file in files:
        try:
            tree = ast.parse(file.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".", 1)[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".", 1)[0])
    return names
