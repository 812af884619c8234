"""The count of explicit ``typing.Any`` in ``referee/`` (``tests/any_count.py``) may only fall.

Each ``Any`` is a place where mypy checks nothing; the ceiling below keeps new ones out. When a
change removes some, lower ``CEILING`` to the new total (``python tests/any_count.py``) so they
cannot come back.
"""

from __future__ import annotations

from pathlib import Path

from tests.any_count import count

ROOT = Path(__file__).resolve().parents[1]
#: The total ``python tests/any_count.py`` prints today; it only goes down.
CEILING = 197


def test_any_count_stays_under_the_ceiling() -> None:
    """The referee's ``Any`` total is no higher than the pinned ceiling."""
    found = count(ROOT)
    total = sum(found.values())
    per_area = ", ".join(f"{area} {n}" for area, n in sorted(found.items()))
    assert total <= CEILING, (
        f"{total} uses of Any in referee/, over the ceiling of {CEILING} ({per_area}): type the "
        "new code instead (a Protocol, a TypedDict, object, a type variable). When a change "
        f"removes Any, lower CEILING in tests/{Path(__file__).name} to the new total that "
        "`python tests/any_count.py` prints, so they cannot come back."
    )


def test_the_counter_sees_any(tmp_path: Path) -> None:
    """A small tree with Any in annotations and a dotted ``typing.Any`` is counted, imports not."""
    package = tmp_path / "referee" / "area"
    package.mkdir(parents=True)
    (tmp_path / "referee" / "top.py").write_text(
        "from typing import Any\n\ndef f(x: Any) -> Any:\n    return x\n", encoding="utf-8"
    )
    (package / "mod.py").write_text(
        "import typing\n\nVALUE: dict[str, typing.Any] = {}\n", encoding="utf-8"
    )
    assert count(tmp_path) == {".": 2, "area": 1}
