"""Makes this interpreter behave like a bare ``pip install tetromino-arena``: every module named
in ``TETROMINO_ABSENT_MODULES`` (comma-separated top-level names) fails to import as if its
package were not installed. Put this folder first on ``PYTHONPATH`` to use it."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

ABSENT = frozenset(filter(None, os.environ.get("TETROMINO_ABSENT_MODULES", "").split(",")))


class _NotInstalled:
    """A meta path finder that refuses the absent packages before any real finder sees them."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name.partition(".")[0] in ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())  # type: ignore[arg-type]
