"""Count the explicit uses of ``typing.Any`` in a checkout's ``referee/``, per sub-package.

``python tests/any_count.py [ROOT]`` prints one line per sub-package and the total: every
``Any`` in an annotation or a type expression (import lines are not counted).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path


def count(root: Path) -> Counter[str]:
    """``Any`` uses per sub-package of ``root/referee`` (``.`` for modules directly in it)."""
    found: Counter[str] = Counter()
    for path in sorted((root / "referee").rglob("*.py")):
        parts = path.relative_to(root / "referee").parts
        area = parts[0] if len(parts) > 1 else "."
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = isinstance(node, ast.Name) and node.id == "Any"
            dotted = isinstance(node, ast.Attribute) and node.attr == "Any"
            if named or dotted:
                found[area] += 1
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    found = count(root)
    for area, n in sorted(found.items()):
        print(f"{area:12} {n}")
    print(f"{'total':12} {sum(found.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
