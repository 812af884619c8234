"""Count import cycles between referee's sub-packages, imports pointing up its layers, and
import cycles between single files (the file circles).

``python tests/import_graph.py`` prints the counts (each upward import, each file circle);
``--graph`` also prints every sub-package's imports. The layer order is this checkout's
``referee-layers`` contract in ``pyproject.toml`` (top first); ``--root DIR`` counts another
checkout against it (e.g. an older commit:
``git archive COMMIT engine referee client_sdk bench | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

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


#: The packages whose modules the file count covers (``bench/`` is a folder of scripts that
#: import each other by bare name).
FILE_PACKAGES = ("engine", "referee", "client_sdk", "bench")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_imports(path: Path, root: Path, modules: set[str]) -> Iterator[str]:
    """The modules of ``modules`` that the file at ``path`` imports, at any depth
    (``TYPE_CHECKING`` ones too): ``from pkg import name`` imports ``pkg.name`` when that is a
    module, else ``pkg``; any other name is taken by its longest prefix that is a module."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    # A folder without __init__.py holds scripts: a bare name there that is not one of the
    # packages is a sibling file (the scripts put the checkout first on sys.path, so that
    # bench/referee.py does not shadow the package).
    scripts = not (path.parent / "__init__.py").is_file()

    def known(name: str) -> str | None:
        names = name.split(".")
        sibling = ".".join([*package, names[0]])
        if scripts and names[0] not in FILE_PACKAGES and sibling in modules:
            names = [*package, *names]
        while names and ".".join(names) not in modules:
            names.pop()
        return ".".join(names) or None

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found = [known(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found = [known(f"{base}.{alias.name}" if base else alias.name) for alias in node.names]
        else:
            continue
        yield from (module for module in found if module is not None)


def file_graph(root: Path = ROOT) -> nx.DiGraph[str]:
    """Every import between two modules of :data:`FILE_PACKAGES` in the checkout at ``root``."""
    paths = {
        _module_name(path, root): path
        for top in FILE_PACKAGES
        for path in sorted((root / top).rglob("*.py"))
        if not path.name.endswith(("_pb2.py", "_pb2_grpc.py"))
    }
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(paths)
    for source, path in paths.items():
        for target in _file_imports(path, root, set(paths)):
            if target != source:
                graph.add_edge(source, target)
    return graph


def file_circles(graph: nx.DiGraph[str]) -> list[list[str]]:
    """The strongly connected groups of more than one module, each sorted, in order."""
    groups = nx.strongly_connected_components(graph)
    return sorted(sorted(group) for group in groups if len(group) > 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", action="store_true", help="print every sub-package's imports")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to count")
    args = parser.parse_args(argv)
    graph = import_graph(args.root)
    groups = cycles(graph)
    up = upward(graph, layer_order())
    circles = file_circles(file_graph(args.root))
    print(f"package cycles: {len(groups)} group(s), {sum(map(len, groups))} sub-packages")
    for group in groups:
        print("  cycle:", ", ".join(group))
    print(f"upward imports: {len(up)}")
    for line in up:
        print("  ", line)
    print(f"file circles: {len(circles)}")
    for circle in circles:
        print("  circle:", ", ".join(circle))
    if args.graph:
        for source in sorted(graph):
            for target in sorted(graph[source]):
                print(f"{source} -> {target}: {len(graph[source][target])}")
    return 1 if groups or up else 0


if __name__ == "__main__":
    sys.exit(main())
