"""The platform's bot-side packages are compiled once, before bots start, where writable."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from referee.sandbox import bytecode
from referee.sandbox.bytecode import compile_platform


def _package(root: Path) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("X = 1\n")
    (root / "pkg" / "sub" / "mod.py").write_text("Y = 2\n")
    (root / "top.py").write_text("Z = 3\n")


def _cached(path: Path) -> bool:
    return Path(importlib.util.cache_from_source(str(path))).is_file()


def test_every_module_of_the_parts_gets_its_bytecode(tmp_path: Path) -> None:
    """Folders are compiled recursively and single files too; nothing else is touched."""
    _package(tmp_path)
    (tmp_path / "other.py").write_text("W = 4\n")
    assert compile_platform(tmp_path, ("pkg", "top.py"))
    for module in ("pkg/__init__.py", "pkg/sub/mod.py", "top.py"):
        assert _cached(tmp_path / module), module
    assert not _cached(tmp_path / "other.py")


def test_edited_source_is_compiled_again_by_the_next_process(tmp_path: Path) -> None:
    """Stale bytecode (the source changed since) is replaced, not kept."""
    _package(tmp_path)
    assert compile_platform(tmp_path, ("pkg",))
    pyc = Path(importlib.util.cache_from_source(str(tmp_path / "pkg" / "__init__.py")))
    before = pyc.read_bytes()
    source = tmp_path / "pkg" / "__init__.py"
    source.write_text("X = 'a longer source than before'\n")
    stamp = source.stat().st_mtime + 5  # an edit seconds later (the stamp counts seconds)
    os.utime(source, (stamp, stamp))
    compile_platform.cache_clear()  # a new referee process
    assert compile_platform(tmp_path, ("pkg",))
    assert pyc.read_bytes() != before


def test_a_checkout_it_cannot_write_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No error and no bytecode where the referee may not write (``os.access`` says so: the
    tests may run as root, who may write anywhere)."""
    _package(tmp_path)
    monkeypatch.setattr(bytecode.os, "access", lambda path, mode: False)
    assert not compile_platform(tmp_path, ("pkg", "top.py"))
    assert not _cached(tmp_path / "pkg" / "__init__.py")
    assert not _cached(tmp_path / "top.py")
