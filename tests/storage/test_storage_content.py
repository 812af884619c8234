"""Content hashes of bot code: stable for the same code, different for any change."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.storage.content import content_hash


def _package(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "__init__.py").write_text("from .program import Agent\n")
    (root / "agent" / "program.py").write_text("class Agent:\n    pass\n")
    return root / "agent"


def test_same_code_same_hash_anywhere(tmp_path: Path) -> None:
    """Two copies of one package hash alike; caches and VCS folders do not count."""
    first = _package(tmp_path / "a")
    second = _package(tmp_path / "b")
    (second / "__pycache__").mkdir()
    (second / "__pycache__" / "program.cpython-311.pyc").write_bytes(b"\0junk")
    (second / ".git").mkdir()
    (second / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert content_hash(first) == content_hash(second)
    assert content_hash(first).startswith("sha256:")


@pytest.mark.parametrize("change", ["edit", "rename", "add", "remove", "move"])
def test_any_change_changes_the_hash(tmp_path: Path, change: str) -> None:
    """Editing, renaming, adding, removing or moving a file gives a new hash."""
    package = _package(tmp_path)
    before = content_hash(package)
    program = package / "program.py"
    if change == "edit":
        program.write_text("class Agent:\n    pass  # smarter\n")
    elif change == "rename":
        program.rename(package / "program2.py")
    elif change == "add":
        (package / "helper.py").write_text("")
    elif change == "remove":
        program.unlink()
    else:
        (package / "sub").mkdir()
        program.rename(package / "sub" / "program.py")
    assert content_hash(package) != before


def test_single_file_and_missing_path(tmp_path: Path) -> None:
    """A single file (e.g. an SDK module) hashes too; a missing path is an error."""
    module = tmp_path / "bot.py"
    module.write_text("print('hi')\n")
    assert content_hash(module) != content_hash(tmp_path)
    with pytest.raises(FileNotFoundError):
        content_hash(tmp_path / "missing")
