"""The platform's neutral copy holds the Tetress placement tables' file, so sandboxed bots read
the tables instead of building them, whether or not the checkout has one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.tetress import shapes, tables
from referee.sandbox import mirror

ROOT = Path(__file__).resolve().parents[2]


def _checkout_without_tables(tmp_path: Path) -> Path:
    source = tmp_path / "checkout" / "engine"
    shutil.copytree(
        ROOT / "engine",
        source,
        copy_function=shutil.copy2,  # the times the tables' stamp is made of
        ignore=shutil.ignore_patterns("__pycache__", "tables.bin"),
    )
    return source


def test_the_platform_copy_gets_tables_matching_its_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copied from a checkout of the engine this process runs, without a tables file, the
    copy has one that its own modules accept, with the tables this process holds."""
    source = _checkout_without_tables(tmp_path)
    target = tmp_path / "copy"
    monkeypatch.setattr(tables, "FOLDER", str(source / "tetress"))  # as if this process ran it
    mirror._platform_copy([source], ("engine",), target, "/opt/arena")
    folder = target / "engine" / "tetress"
    stored = tables.read(str(folder / "tables.bin"), str(folder))
    assert stored is not None
    assert stored["PLACEMENT_MASKS"] == shapes.PLACEMENT_MASKS


def test_no_tables_from_another_checkout(tmp_path: Path) -> None:
    """An engine other than the one this process runs gets no tables file (this process's
    tables might not be its tables); its bots build them."""
    source = _checkout_without_tables(tmp_path)
    target = tmp_path / "copy"
    mirror._platform_copy([source], ("engine",), target, "/opt/arena")
    assert not (target / "engine" / "tetress" / "tables.bin").exists()
