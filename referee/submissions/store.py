"""The submission store: a folder holding every uploaded version's code, named by its hash.

Layout (``ROOT`` is ``referee serve --submissions DIR``)::

    ROOT/versions/<sha256 hex>/...   one unpacked, read-only tree per version
    ROOT/builds/<sha256 hex>/...     a C++ or JavaScript version's built artefact (build.py)
    ROOT/incoming/tmpXXXX/            an upload being unpacked (removed on any outcome)

Files live on disk rather than in the database because the sandbox launches a version from a
folder (Python imports files), because a NumPy table can be megabytes, and so that PostgreSQL
and SQLite hold only facts (owner, size, times, verdicts) and stay small to back up. A version's
folder is written once, under its content hash and nowhere else (the uploader's names only ever
appear *inside* it, after :mod:`referee.submissions.archive` vetted them), then made read-only;
the same code uploaded twice is stored once.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.storage.content import content_hash
from referee.submissions.archive import Unpacked, unpack
from referee.submissions.build import ARTEFACT, Toolchains, build_upload, command_of
from referee.submissions.layout import Entry, check_helpers, find_entry
from referee.submissions.limits import UploadLimits


@dataclass(frozen=True, slots=True)
class Stored:
    """One version in the store: its hash, folder, bot entry and size."""

    digest: str
    path: Path
    entry: Entry
    unpacked: Unpacked

    @property
    def version(self) -> str:
        """The version string: the hash's first 12 hex digits (the full hash is kept too)."""
        return self.digest[:12]

    @property
    def target(self) -> str:
        """The BOT argument that launches this version (a Python one; a built one's command
        is :func:`~referee.submissions.build.command_of` its build folder)."""
        return self.entry.target(self.path)


class SubmissionStore:
    """Content-addressed, write-once storage of unpacked submissions under ``root``; C++ and
    JavaScript versions are built against ``tools`` (the server's own client builds)."""

    def __init__(self, root: str | os.PathLike[str], tools: Toolchains | None = None) -> None:
        self.root = Path(root).resolve()
        self.tools = tools or Toolchains()
        self.versions = self.root / "versions"
        self.incoming = self.root / "incoming"
        self.builds = self.root / "builds"
        for folder in (self.root, self.versions, self.incoming, self.builds):
            folder.mkdir(mode=0o755, parents=True, exist_ok=True)

    def ingest(
        self,
        data: bytes,
        limits: UploadLimits,
        admit: Callable[[Unpacked, str], None] | None = None,
    ) -> Stored:
        """Vet, unpack, hash and file ``data``; raises ``ArchiveRefused`` / ``LayoutError``
        (or whatever ``admit(unpacked, digest)`` raises to refuse it, e.g. over a quota) with
        nothing left behind."""
        work = Path(tempfile.mkdtemp(prefix="upload-", dir=self.incoming))
        try:
            tree = work / "tree"
            tree.mkdir()
            unpacked = unpack(data, tree, limits)
            entry = find_entry(tree)
            check_helpers(tree, entry)
            digest = content_hash(tree).split(":", 1)[1]
            if admit is not None:
                admit(unpacked, digest)
            final = self.versions / digest
            if not final.exists():
                _seal(tree)
                try:
                    os.rename(tree, final)
                except OSError:
                    # Another upload of the same code got there first: same bytes, keep theirs.
                    if not final.is_dir():
                        raise
            return Stored(digest, final, entry, unpacked)
        finally:
            shutil.rmtree(work, onerror=_force_remove)

    def path_of(self, digest: str) -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return self.versions / digest

    def build_of(self, digest: str) -> Path:
        """Where version ``digest``'s artefact lies (once built)."""
        self.path_of(digest)  # the same check of the digest
        return self.builds / digest

    def build(self, digest: str, entry: Entry, contained: bool) -> str:
        """Build version ``digest`` (once: a second call finds it); the launch command.
        Raises :class:`~referee.submissions.build.BuildFailed` with the student's sentence, or
        :class:`~referee.submissions.build.BuildUnavailable` (and its ``BuildCrashed``) when the
        fault is the server's."""
        final = self.build_of(digest)
        if not (final / ARTEFACT).is_file():
            work = Path(tempfile.mkdtemp(prefix="build-", dir=self.incoming))
            try:
                out = work / "out"
                out.mkdir()
                source = self.path_of(digest)
                build_upload(
                    source, entry.language, entry.name, out, contained=contained, tools=self.tools
                )
                _seal(out)
                if final.exists():  # a build cut short (no manifest): never launched, redone
                    shutil.rmtree(final, onerror=_force_remove)
                try:
                    os.rename(out, final)
                except OSError:
                    # The same version built at once by another upload: same sources, keep it.
                    if not (final / ARTEFACT).is_file():
                        raise
            finally:
                shutil.rmtree(work, onerror=_force_remove)
        return command_of(entry.language, final)


def _seal(tree: Path) -> None:
    """Make the tree read-only (files 0444, or 0555 if executable, folders 0555; links are
    left as they are): a stored version never changes."""
    for folder, dirs, files in os.walk(tree, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555 if os.stat(path).st_mode & 0o100 else 0o444)
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o555)
    os.chmod(tree, 0o555)


def _force_remove(func: object, path: str, _exc: object) -> None:
    # A half-sealed tree left by a failed rename: make its folder writable and retry.
    parent = os.path.dirname(path)
    os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o755)
        shutil.rmtree(path, onerror=_force_remove)
    else:
        os.unlink(path)
