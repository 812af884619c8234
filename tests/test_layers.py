"""The layers of referee's sub-packages: no import cycle between them, no import up the order;
no import cycle between single files but the engine's; the engine and the SDK below the referee
(bots may import the course's ``referee.game``); the SDK's private modules its own.

Two independent checks of one order (``[tool.importlinter]`` in ``pyproject.toml``): the
import-linter contracts, and the AST count of ``tests/import_graph.py`` (which also counts an
older checkout, for a before/after figure).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from importlinter.application.use_cases import SUCCESS, lint_imports
from importlinter.configuration import configure

from tests.import_graph import (
    ROOT,
    cycles,
    file_circles,
    file_graph,
    import_graph,
    layer_order,
    upward,
)

#: The engine's files that import each other on purpose: a game's rules, its notation and its
#: state are one unit (and so are the board's precomputed tables), split for size.
DELIBERATE_CIRCLES = [
    ["engine.att.game", "engine.att.notation", "engine.att.state"],
    [
        "engine.tetress.bitboard",
        "engine.tetress.shapes",
        "engine.tetress.tables",
        "engine.tetress.zobrist",
    ],
    ["engine.tetress.game", "engine.tetress.state"],
]


def test_import_linter_contracts_are_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """Every contract in pyproject.toml (the layers, the engine and SDK below the referee, the
    SDK's private modules) holds for the code as it is."""
    configure()
    # No cache: parallel test processes must not share one in the working directory.
    passed = lint_imports(str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    shown = capsys.readouterr().out
    assert "referee's sub-packages import only downwards KEPT" in shown, shown
    assert "nothing outside the SDK imports its private modules KEPT" in shown, shown
    assert passed == SUCCESS, shown


def _contract(contract_id: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == contract_id]
    assert len(found) == 1, contract_id
    return dict(found[0])


def test_the_engine_and_sdk_may_import_only_referee_game() -> None:
    """The contract keeping the engine and the SDK below the referee forbids every sub-package
    (and top-level module) of referee but the course's ``referee.game``, with no exception: a
    new sub-package is forbidden as soon as it exists."""
    contract = _contract("engine-below-referee")
    forbidden = [name.removeprefix("referee.") for name in contract["forbidden_modules"]]
    assert sorted(forbidden) == sorted(set(_referee_children()) - {"game"})
    assert "ignore_imports" not in contract


def test_the_private_modules_contract_sees_a_referee_module_importing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The SDK's private-modules contract, applied to a toy SDK and referee, breaks on the
    referee importing a ``_`` module of the SDK (inside a function, as a lazy import would)
    and holds for its public module."""
    contract = _contract("sdk-private-modules")
    contract["packages_with_private_modules"] = ["toy_sdk"]
    for name, text in {
        "toy_sdk/_messages.py": "LIMIT = 256\n",
        "toy_sdk/protocol.py": "from toy_sdk._messages import LIMIT\n",
        "toy_referee/seat.py": "def later():\n    from toy_sdk._messages import LIMIT\n",
        "toy_referee/bounds.py": "from toy_sdk.protocol import LIMIT\n",
    }.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text)
    fields = "\n".join(f"{key} = {_toml(value)}" for key, value in contract.items())
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["toy_referee", "toy_sdk"]\n\n'
        f"[[tool.importlinter.contracts]]\n{fields}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    configure()
    passed = lint_imports(str(config), cache_dir=None, no_logo=True)
    shown = capsys.readouterr().out
    assert passed != SUCCESS, shown
    assert "toy_referee.seat -> toy_sdk._messages" in shown, shown
    assert "toy_referee.bounds" not in shown, shown


def _toml(value: object) -> str:
    """A string or a list of strings as TOML."""
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_no_cycle_and_no_upward_import_between_sub_packages() -> None:
    """The AST count finds no cycle between sub-packages and no import up the layer order."""
    graph = import_graph()
    assert "match" in graph and "hosting" in graph
    assert cycles(graph) == []
    assert upward(graph, layer_order()) == []


def test_the_count_sees_an_upward_import_and_its_cycle(tmp_path: Path) -> None:
    """A lower sub-package importing a higher one (inside a function, as a lazy import would)
    is counted as upward and, with the downward import back, as a cycle."""
    for name, text in {
        "match/runner.py": "def later():\n    from referee.hosting import casual\n",
        "hosting/casual.py": "from referee.match.runner import later\n",
    }.items():
        path = tmp_path / "referee" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text)
    graph = import_graph(tmp_path)
    assert cycles(graph) == [["hosting", "match"]]
    assert upward(graph, layer_order()) == ["referee/match/runner.py -> referee.hosting"]


def test_the_only_file_circles_are_the_engines() -> None:
    """No two files of engine, referee, client_sdk or bench import each other (directly or round
    a loop) but the engine's deliberate groups: a piece cut out of a module takes values, not
    the object it was cut from."""
    assert file_circles(file_graph()) == DELIBERATE_CIRCLES


def test_the_count_sees_a_file_circle(tmp_path: Path) -> None:
    """Two files importing each other (one by a relative import under TYPE_CHECKING, one by
    ``from package import module``) are counted as a circle; a bench script's bare import of a
    sibling is resolved to that sibling."""
    for name, text in {
        "referee/match/runner.py": "from referee.match import ending\n",
        "referee/match/ending.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .runner import Runner\n"
        ),
        "referee/match/clock.py": "import referee.match.runner\n",
        "bench/web.py": "from web_live import lag\n",
        "bench/web_live.py": "def later():\n    import web\n",
    }.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.parts[-3] == "referee":
            (path.parent / "__init__.py").touch()
            (path.parent.parent / "__init__.py").touch()
        path.write_text(text)
    assert file_circles(file_graph(tmp_path)) == [
        ["bench.web", "bench.web_live"],
        ["referee.match.ending", "referee.match.runner"],
    ]


def test_every_sub_package_has_a_layer() -> None:
    """Each sub-package (and top-level module) of referee is placed in exactly one layer (a
    new one must be given its place)."""
    placed = [name for layer in layer_order() for name in layer]
    assert sorted(placed) == sorted(_referee_children())


def _referee_children() -> list[str]:
    """The sub-packages and top-level modules of referee."""
    children = (ROOT / "referee").iterdir()
    present = [p.name for p in children if (p / "__init__.py").is_file()]
    return present + [p.stem for p in (ROOT / "referee").glob("*.py") if p.stem != "__init__"]


def test_readme_lists_the_sub_packages_in_layer_order() -> None:
    """The README's layout table names referee's sub-packages bottom up, as the contract
    orders them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ((?:`referee/\w+(?:/|\.py)`(?:, )?)+) \|", readme, flags=re.M)
    listed = [re.findall(r"`referee/(\w+)(?:/|\.py)`", row) for row in rows]
    assert [sorted(names) for names in listed] == [sorted(layer) for layer in layer_order()]
