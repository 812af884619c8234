"""Which paths inside an uploaded archive are acceptable: the same rules on every file system.

A name is refused (with the reason) if it could escape the folder it is unpacked into
(absolute, ``..``, a drive letter), if some common file system cannot hold it (Windows'
reserved names and characters, a trailing dot or space, over-long parts), if it holds a
character never shown (controls, bidirectional overrides, zero-width characters),
or if it would collide with another name where case is ignored (macOS, Windows).
"""

from __future__ import annotations

import re

from referee.errors import RefereeError
from referee.submissions.limits import UploadLimits
from referee.text.names import hidden_in

_FORBIDDEN_CHARS = frozenset('<>:"|?*\\')
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)
#: Tool litter that is dropped rather than stored (never the bot's code).
DROPPED_DIRS = frozenset({"__pycache__", "__MACOSX", ".git", ".hg", ".svn", ".mypy_cache"})
DROPPED_SUFFIXES = (".pyc", ".pyo")
DROPPED_FILES = frozenset({".DS_Store", "Thumbs.db"})


class BadName(RefereeError, ValueError):
    """A member name that may not be unpacked; the message says why."""


def check_name(raw: str, limits: UploadLimits) -> tuple[str, ...]:
    """The path's parts, or :class:`BadName` saying what is wrong with ``raw``."""
    shown = repr(raw[:80])
    if not raw or raw in ("/", "."):
        raise BadName("a member has an empty name")
    if "\\" in raw:
        raise BadName(f"{shown} contains a backslash (a Windows path separator)")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:/", raw):
        raise BadName(f"{shown} is an absolute path")
    hidden = hidden_in(raw)
    if hidden is not None:
        # Bidirectional overrides would show `exe.py` as `yp.exe`; zero-width ones hide a twin.
        raise BadName(f"{shown} contains a control or invisible character ({hidden})")
    if len(raw.encode("utf-8", "surrogateescape")) > limits.max_path_bytes:
        raise BadName(f"{shown} is longer than {limits.max_path_bytes} bytes")
    parts = tuple(p for p in raw.rstrip("/").split("/"))
    for part in parts:
        _check_part(part, shown)
    if len(parts) > limits.max_depth:
        raise BadName(f"{shown} is nested deeper than {limits.max_depth} folders")
    return parts


def _check_part(part: str, shown: str) -> None:
    if part in ("", "."):
        raise BadName(f"{shown} has an empty or '.' path component")
    if part == "..":
        raise BadName(f"{shown} climbs out of the archive with '..'")
    bad = sorted(set(part) & _FORBIDDEN_CHARS)
    if bad:
        raise BadName(f"{shown} contains {''.join(bad)!r}, not allowed in file names on Windows")
    if part[-1] in ". ":
        raise BadName(f"{shown} has a part ending in a dot or a space")
    if part.split(".", 1)[0].lower() in _RESERVED:
        raise BadName(f"{shown} uses a name reserved on Windows ({part.split('.', 1)[0]})")
    if len(part.encode("utf-8", "surrogateescape")) > 255:
        raise BadName(f"{shown} has a part longer than 255 bytes")


def dropped(parts: tuple[str, ...]) -> bool:
    """Caches, VCS folders and OS litter: not stored, and not counted as the bot's files."""
    if any(p in DROPPED_DIRS for p in parts):
        return True
    return parts[-1] in DROPPED_FILES or parts[-1].endswith(DROPPED_SUFFIXES)


class NameSet:
    """Names seen so far, refusing case-insensitive duplicates and file/folder clashes."""

    def __init__(self) -> None:
        self._files: dict[str, str] = {}
        self._dirs: dict[str, str] = {}

    def add(self, parts: tuple[str, ...], *, is_dir: bool) -> None:
        shown = "/".join(parts)
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]).casefold()
            if folder in self._files:
                raise BadName(f"{shown!r} lies under {self._files[folder]!r}, which is a file")
            self._dirs.setdefault(folder, "/".join(parts[:depth]))
        key = shown.casefold()
        if is_dir:
            if key in self._files:
                raise BadName(f"{shown!r} is both a file and a folder")
            self._dirs.setdefault(key, shown)
            return
        if key in self._dirs:
            raise BadName(f"{shown!r} is both a file and a folder")
        if key in self._files:
            other = self._files[key]
            what = "twice" if other == shown else f"and as {other!r} (same name ignoring case)"
            raise BadName(f"the archive holds {shown!r} {what}")
        self._files[key] = shown
