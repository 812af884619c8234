"""The stored copy of the Tetress placement tables: read back equal, trusted only while it
matches the code that defines them."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.tetress import bitboard, shapes, tables, zobrist
from engine.tetress.placement import Placement


def test_stored_tables_read_back_equal_to_the_modules(tmp_path: Path) -> None:
    """Written and read back, every table equals the one the modules hold, and the placements
    made from the stored cells and texts equal placements built from their masks."""
    path = str(tmp_path / "tables.bin")
    tables.write(path)
    stored = tables.read(path)
    assert stored is not None
    assert stored["PLACEMENT_MASKS"] == shapes.PLACEMENT_MASKS
    assert stored["PLACEMENT_LINES"] == shapes.PLACEMENT_LINES
    assert stored["PLACEMENT_REPL"] == bitboard.PLACEMENT_REPL
    assert stored["PLACEMENT_LINES_REPL"] == bitboard.PLACEMENT_LINES_REPL
    assert stored["PLACEMENT_KEYS"] == zobrist.PLACEMENT_KEYS
    assert stored["ANCHOR_CELL"] == bitboard.ANCHOR_CELL
    knowns = Placement.known_all(
        stored["PLACEMENT_MASKS"], stored["PLACEMENT_CELLS"], stored["PLACEMENT_TEXTS"]
    )
    for mask, known, held in zip(stored["PLACEMENT_MASKS"], knowns, shapes.PLACEMENTS, strict=True):
        built = Placement(mask)
        assert known == built == held
        assert (known.cells, str(known)) == (built.cells, str(built)) == (held.cells, str(held))


def test_a_file_for_other_code_is_not_trusted(tmp_path: Path) -> None:
    """Tables stamped for the defining modules as they were are refused once one of them
    changes; a missing, truncated or foreign file is refused too."""
    folder = tmp_path / "tetress"
    folder.mkdir()
    for name in tables.SOURCES:
        shutil.copy2(Path(tables.FOLDER) / name, folder / name)
    path = str(tmp_path / "tables.bin")
    tables.write(path, folder=str(folder))
    assert tables.read(path, folder=str(folder)) is not None
    source = folder / "shapes.py"
    source.write_text(source.read_text() + "\n# an edit\n")
    assert tables.read(path, folder=str(folder)) is None
    assert tables.read(str(tmp_path / "missing.bin")) is None
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[: len(data) // 2])
    assert tables.read(path, folder=str(folder)) is None
    Path(path).write_bytes(b"not marshal data")
    assert tables.read(path, folder=str(folder)) is None
