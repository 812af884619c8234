"""The content hash of a bot version's code, so one version string always names one body.

``content_hash(path)`` hashes a file, or a directory tree (every regular file's relative path
and bytes, in sorted order; caches and VCS folders skipped), as ``sha256:<hex>``. The same
code gives the same hash wherever it is checked out; any edit, rename, added or removed file
changes it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: Folders and suffixes that are build or tool output, not the bot's code.
SKIPPED_DIRS = frozenset(
    {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
SKIPPED_SUFFIXES = frozenset({".pyc", ".pyo"})
_CHUNK = 1 << 16


def content_hash(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file or of a directory tree."""
    root = Path(path)
    digest = hashlib.sha256()
    if root.is_file():
        digest.update(b"file\0")
        _feed(digest, root)
        return f"sha256:{digest.hexdigest()}"
    if not root.is_dir():
        raise FileNotFoundError(f"no file or directory at {root}")
    digest.update(b"tree\0")
    for file in _files(root):
        relative = file.relative_to(root).as_posix().encode()
        # Length-prefixed so that no two trees can produce the same byte stream.
        digest.update(len(relative).to_bytes(8, "big") + relative)
        digest.update(file.stat().st_size.to_bytes(8, "big"))
        _feed(digest, file)
    return f"sha256:{digest.hexdigest()}"


def _files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        for name in names:
            file = Path(folder) / name
            if file.suffix in SKIPPED_SUFFIXES or not file.is_file():
                continue
            found.append(file)
    return sorted(found, key=lambda f: f.relative_to(root).as_posix())


def _feed(digest: hashlib._Hash, file: Path) -> None:
    with file.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
