"""Count import cycles between referee's sub-packages and imports pointing up its layers.

``python tests/import_graph.py`` prints the counts (and each upward import); ``--graph`` also
prints every sub-package's imports. The layer order is this checkout's ``referee-layers``
contract in ``pyproject.toml`` (top first); ``--root DIR`` counts another checkout's
``referee/`` against it (e.g. an older commit: ``git archive COMMIT referee | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: sub-package -> imported sub-package -> the importing lines ("file -> module").
Graph = dict[str, dict[str, set[str]]]


def layer_order() -> list[list[str]]:
    """The layers of the ``referee-layers`` contract, bottom first (siblings together)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["id"] == "referee-layers")["layers"]
    return [[name.strip() for name in layer.split("|")] for layer in reversed(layers)]


def _imported(tree: ast.AST, package: list[str]) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if not node.level:
                yield node.module or ""
                continue
            base = package[: len(package) - node.level + 1]
            if node.module:
                yield ".".join([*base, node.module])
            else:
                yield from (".".join([*base, alias.name]) for alias in node.names)


def _is_child(package_dir: Path, name: str) -> bool:
    """Whether ``referee.<name>`` is a sub-package or a module directly in ``referee``."""
    return (package_dir / name).is_dir() or (package_dir / f"{name}.py").is_file()


def import_graph(root: Path = ROOT) -> Graph:
    """Every import (at any depth of a module, ``TYPE_CHECKING`` ones too) between two
    sub-packages of ``referee`` in the checkout at ``root``."""
    graph: Graph = {}
    package_dir = root / "referee"
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        package = parts[:-1]
        if len(package) < 2:
            continue
        source = package[1]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module in _imported(tree, package):
            names = module.split(".")
            inside = names[0] == "referee" and len(names) > 1 and names[1] != source
            if inside and _is_child(package_dir, names[1]):
                line = f"{path.relative_to(root)} -> {module}"
                graph.setdefault(source, {}).setdefault(names[1], set()).add(line)
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected groups of more than one sub-package (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    nodes = sorted(set(graph) | {t for targets in graph.values() for t in targets})
    for node in nodes:
        if node not in index:
            visit(node)
    return found


def upward(graph: Graph, order: list[list[str]]) -> list[str]:
    """Imports from a sub-package to one in a higher layer or a sibling of its own layer
    (a sub-package the order does not place counts as the top layer)."""
    rank = {name: i for i, layer in enumerate(order) for name in layer}
    top = len(order)
    return sorted(
        line
        for source, targets in graph.items()
        for target, lines in targets.items()
        if rank.get(target, top) >= rank.get(source, top)
        and not (source not in rank and target not in rank)
        for line in lines
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", action="store_true", help="print every sub-package's imports")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to count")
    args = parser.parse_args(argv)
    graph = import_graph(args.root)
    groups = cycles(graph)
    up = upward(graph, layer_order())
    print(f"package cycles: {len(groups)} group(s), {sum(map(len, groups))} sub-packages")
    for group in groups:
        print("  cycle:", ", ".join(group))
    print(f"upward imports: {len(up)}")
    for line in up:
        print("  ", line)
    if args.graph:
        for source in sorted(graph):
            for target in sorted(graph[source]):
                print(f"{source} -> {target}: {len(graph[source][target])}")
    return 1 if groups or up else 0


if __name__ == "__main__":
    sys.exit(main())
