"""Hostile and good archives, built byte by byte for the upload tests."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from collections.abc import Mapping

GOOD_SDK_BOT = """
import random

from client_sdk import Agent


class Bot(Agent):
    name = "uploaded"

    def choose_move(self, state, clocks):
        return random.choice(list(state.legal_moves))
"""


def zip_of(files: Mapping[str, bytes | str]) -> bytes:
    """A zip holding ``files`` (name -> content), deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def zip_with_symlink(name: str, target: str) -> bytes:
    """A zip whose member ``name`` is a Unix symbolic link to ``target`` (as Info-ZIP writes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", GOOD_SDK_BOT)
        info = zipfile.ZipInfo(name)
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, target)
    return buffer.getvalue()


def zip_bomb(unpacked_mb: int) -> bytes:
    """A small zip of zeros that unpacks to ``unpacked_mb`` MB."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("bot.py", "w", force_zip64=True) as member,
    ):
        block = b"\0" * (1024 * 1024)
        for _ in range(unpacked_mb):
            member.write(block)
    return buffer.getvalue()


def zip_lying_about_size(real: bytes, declared: int) -> bytes:
    """A zip whose one member holds ``real`` but declares ``declared`` bytes (headers forged)."""
    good = zip_of({"bot.py": real})
    size = len(real).to_bytes(4, "little")
    forged = declared.to_bytes(4, "little")
    # The uncompressed size sits at offset 22 of the local header and 24 of the central one.
    local = good.index(b"PK\x03\x04")
    central = good.index(b"PK\x01\x02")
    data = bytearray(good)
    assert data[local + 22 : local + 26] == size and data[central + 24 : central + 28] == size
    data[local + 22 : local + 26] = forged
    data[central + 24 : central + 28] = forged
    return bytes(data)


def tar_of(members: list[tarfile.TarInfo], contents: Mapping[str, bytes] | None = None) -> bytes:
    """A gzip tar of ``members`` (regular files take their bytes from ``contents``)."""
    contents = contents or {}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info in members:
            data = contents.get(info.name)
            if data is not None:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            else:
                archive.addfile(info)
    return buffer.getvalue()


def tar_member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o644
    return info


def tar_bomb(unpacked_mb: int) -> bytes:
    """A gzip tar of one file of zeros unpacking to ``unpacked_mb`` MB."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=9) as archive:
        info = tarfile.TarInfo("bot.py")
        info.size = unpacked_mb * 1024 * 1024

        class Zeros(io.RawIOBase):
            def readable(self) -> bool:
                return True

            def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
                b[: len(b)] = bytes(len(b))
                return len(b)

        archive.addfile(info, io.BufferedReader(Zeros()))
    return buffer.getvalue()
