"""Unpacking an uploaded archive that may be hostile, into a fresh folder and nowhere else.

:func:`unpack` takes the archive's bytes (a zip, or a tar, plain or gzip/bzip2/xz compressed)
and a new empty folder, and either writes the archive's regular files there or raises
:class:`ArchiveRefused` with a sentence for the student. It refuses, before writing anything
where it can and always before writing outside ``dest``:

* something that is not a zip or tar archive, an encrypted zip member, an empty archive;
* a member name that is absolute, climbs out with ``..``, or is not valid on common file
  systems (:mod:`referee.submissions.names`);
* symbolic links, hard links, device files, FIFOs and sparse files (only regular files and
  folders are unpacked);
* more than ``max_files`` files, more than ``max_unpacked_bytes`` unpacked, and compression
  bombs: sizes are checked as declared *and* counted while decompressing, so an archive that
  lies about its sizes is cut off at the limit, never written past it.

Files are created with ``O_EXCL | O_NOFOLLOW`` under folders this code made itself, so no
name can redirect a write. The caller deletes ``dest`` when this raises.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from referee.submissions.errors import ArchiveRefused
from referee.submissions.limits import UploadLimits
from referee.submissions.names import BadName, NameSet, check_name, dropped

_CHUNK = 1 << 16
_TAR_OVERHEAD = 1024  # header + padding per member, for the decompressed-stream cap


@dataclass(frozen=True, slots=True)
class Unpacked:
    """What was written: regular files and their total size (dropped litter not counted)."""

    files: int
    bytes: int
    dropped: int


def archive_kind(data: bytes) -> str:
    """``zip``, ``tar``, ``tar.gz``, ``tar.bz2`` or ``tar.xz``; :class:`ArchiveRefused` else."""
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    for magic, kind in ((b"\x1f\x8b", "tar.gz"), (b"BZh", "tar.bz2"), (b"\xfd7zXZ\x00", "tar.xz")):
        if data.startswith(magic):
            return kind
    if len(data) >= 262 and data[257:262] == b"ustar":
        return "tar"
    if not data:
        raise ArchiveRefused("the upload is empty: send a zip or tar archive of your bot")
    raise ArchiveRefused(
        "the upload is not a zip or tar archive (python -m client_sdk submit makes one)"
    )


def unpack(data: bytes, dest: Path, limits: UploadLimits) -> Unpacked:
    """Unpack ``data`` into the empty folder ``dest`` (see the module docstring)."""
    if len(data) > limits.max_archive_bytes:
        raise ArchiveRefused(
            f"the archive is {_mb(len(data))}, over the limit of {_mb(limits.max_archive_bytes)}"
        )
    kind = archive_kind(data)
    writer = _Writer(dest, limits, len(data))
    try:
        if kind == "zip":
            _unpack_zip(data, writer)
        else:
            _unpack_tar(data, kind, writer, limits)
    except BadName as exc:
        raise ArchiveRefused(f"refused: {exc}") from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, lzma.LZMAError) as exc:
        raise ArchiveRefused(f"the {kind} archive is damaged or truncated ({exc})") from None
    if writer.files == 0:
        raise ArchiveRefused("the archive holds no files")
    return Unpacked(writer.files, writer.total, writer.dropped)


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 100 * 1024 else f"{n} bytes"


class _Writer:
    """Counts files and bytes against the limits and writes each file exclusively."""

    def __init__(self, dest: Path, limits: UploadLimits, archive_bytes: int) -> None:
        self.dest = dest
        self.limits = limits
        self.archive_bytes = archive_bytes
        self.names = NameSet()
        self.files = 0
        self.total = 0
        self.dropped = 0

    def directory(self, raw: str) -> None:
        parts = check_name(raw, self.limits)
        if not dropped(parts):
            self.names.add(parts, is_dir=True)
            self._mkdirs(parts)

    def admit(self, raw: str, declared: int) -> tuple[str, ...] | None:
        """The parts to write ``raw`` at, ``None`` to skip it; refuses over the limits."""
        parts = check_name(raw, self.limits)
        if dropped(parts):
            self.dropped += 1
            return None
        self.names.add(parts, is_dir=False)
        self.files += 1
        if self.files > self.limits.max_files:
            raise ArchiveRefused(f"the archive holds more than {self.limits.max_files} files")
        self._check_total(self.total + max(declared, 0), declared=True)
        return parts

    def _check_total(self, total: int, *, declared: bool) -> None:
        limit = self.limits.max_unpacked_bytes
        if total <= limit:
            return
        ratio = total / max(self.archive_bytes, 1)
        if ratio > self.limits.max_ratio:
            raise ArchiveRefused(
                f"compression bomb: a {_mb(self.archive_bytes)} archive unpacks to more than "
                f"{_mb(limit)} (the limit; ratio over {ratio:.0f}:1)"
            )
        said = "" if not declared else " (as declared by the archive)"
        raise ArchiveRefused(f"the archive unpacks to more than {_mb(limit)}{said}")

    def write(self, parts: tuple[str, ...], chunks: Iterator[bytes], declared: int) -> None:
        folder = self._mkdirs(parts[:-1])
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(folder / parts[-1], flags, 0o644)
        written = 0
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                written += len(chunk)
                if declared >= 0 and written > declared:
                    raise ArchiveRefused(
                        f"{'/'.join(parts)!r} holds more than its declared {declared} bytes "
                        "(a forged size)"
                    )
                self._check_total(self.total + written, declared=False)
                handle.write(chunk)
        self.total += written

    def _mkdirs(self, parts: tuple[str, ...]) -> Path:
        folder = self.dest
        for part in parts:
            folder = folder / part
            try:
                os.mkdir(folder, 0o755)
            except FileExistsError:
                # Only this code creates entries under dest, and it never makes links.
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    shown = "/".join(parts)
                    raise ArchiveRefused(f"{shown!r} is both a file and a folder") from None
        return folder


def _unpack_zip(data: bytes, writer: _Writer) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        if len(infos) > writer.limits.max_files * 4:
            raise ArchiveRefused(f"the archive holds more than {writer.limits.max_files} files")
        for info in infos:
            _check_zip_type(info)
        # Declared sizes first: a bomb is refused before a single byte is inflated.
        declared = sum(i.file_size for i in infos if not i.is_dir())
        writer._check_total(declared, declared=True)
        for info in infos:
            if info.is_dir():
                writer.directory(info.filename)
                continue
            parts = writer.admit(info.filename, info.file_size)
            if parts is not None:
                with archive.open(info) as member:
                    writer.write(parts, _chunks(member), info.file_size)


def _check_zip_type(info: zipfile.ZipInfo) -> None:
    shown = repr(info.filename[:80])
    if info.flag_bits & 0x1:
        raise ArchiveRefused(f"{shown} is encrypted: upload an unencrypted archive")
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode):
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise ArchiveRefused(f"{shown} is a symbolic link: links are not accepted")
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveRefused(f"{shown} is a device, FIFO or socket, not a regular file")


_OPENERS: dict[str, Callable[[IO[bytes]], Any]] = {
    "tar": lambda raw: raw,
    "tar.gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    "tar.bz2": lambda raw: bz2.BZ2File(raw, mode="rb"),
    "tar.xz": lambda raw: lzma.LZMAFile(raw, mode="rb"),  # noqa: SIM115 (closed with the tar)
}


def _unpack_tar(data: bytes, kind: str, writer: _Writer, limits: UploadLimits) -> None:
    cap = limits.max_unpacked_bytes + _TAR_OVERHEAD * (limits.max_files * 4 + 20)
    stream = _CappedReader(_OPENERS[kind](io.BytesIO(data)), cap, writer)
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            _check_tar_type(member)
            if member.isdir():
                writer.directory(member.name)
                continue
            parts = writer.admit(member.name, member.size)
            source = archive.extractfile(member)
            if parts is not None and source is not None:
                writer.write(parts, _chunks(source), member.size)


def _check_tar_type(member: tarfile.TarInfo) -> None:
    shown = repr(member.name[:80])
    if member.issym():
        raise ArchiveRefused(f"{shown} is a symbolic link (to {member.linkname[:80]!r})")
    if member.islnk():
        raise ArchiveRefused(f"{shown} is a hard link (to {member.linkname[:80]!r})")
    if member.ischr() or member.isblk() or member.isfifo():
        raise ArchiveRefused(f"{shown} is a device file or FIFO, not a regular file")
    if member.issparse():
        raise ArchiveRefused(f"{shown} is a sparse file")
    if not (member.isreg() or member.isdir()):
        raise ArchiveRefused(f"{shown} is not a regular file or folder")


class _CappedReader(io.RawIOBase):
    """A decompressed stream that refuses to yield more than ``cap`` bytes (tar bombs)."""

    def __init__(self, inner: IO[bytes], cap: int, writer: _Writer) -> None:
        self.inner = inner
        self.cap = cap
        self.read_so_far = 0
        self.writer = writer

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        self.read_so_far += len(data)
        if self.read_so_far > self.cap:
            self.writer._check_total(self.read_so_far, declared=False)
            raise ArchiveRefused("the archive unpacks to more than the limit")
        buffer[: len(data)] = data
        return len(data)


def _chunks(source: IO[bytes]) -> Iterator[bytes]:
    while chunk := source.read(_CHUNK):
        yield chunk
