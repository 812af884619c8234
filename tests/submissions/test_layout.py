"""Which entry is the bot, and which imports a submitted bot may use."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.submissions.errors import LayoutError
from referee.submissions.layout import find_entry, foreign_imports


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_manifest_names_the_entry_and_class(tmp_path: Path) -> None:
    """submission.json picks the entry among several packages, with its class."""
    root = _tree(
        tmp_path,
        {
            "submission.json": '{"entry": "agent", "class": "Agent"}',
            "agent/__init__.py": "",
            "helpers/__init__.py": "",
        },
    )
    entry = find_entry(root)
    assert (entry.name, entry.is_package, entry.agent_class) == ("agent", True, "Agent")
    assert entry.target(root) == f"{root}/agent:Agent"


def test_single_package_or_module_is_found_without_manifest(tmp_path: Path) -> None:
    """One package (helper modules beside it allowed) or one module needs no manifest."""
    assert find_entry(_tree(tmp_path / "a", {"bot/__init__.py": "", "util.py": ""})).name == "bot"
    entry = find_entry(_tree(tmp_path / "b", {"solo.py": ""}))
    assert (entry.name, entry.is_package) == ("solo", False)


def test_a_manifest_naming_nothing_is_refused(tmp_path: Path) -> None:
    """A manifest whose entry is missing from the archive says so."""
    root = _tree(tmp_path, {"submission.json": '{"entry": "ghost"}', "bot.py": ""})
    with pytest.raises(LayoutError, match="no such package or module"):
        find_entry(root)


def test_allowed_imports_pass(tmp_path: Path) -> None:
    """Stdlib, NumPy, the SDK, referee.game and the bot's own helpers are all allowed."""
    root = _tree(
        tmp_path,
        {
            "agent/__init__.py": "from .program import Agent\n",
            "agent/program.py": (
                "import json, os.path\nimport numpy as np\nfrom referee.game import Board\n"
                "from referee import game\nfrom client_sdk import Agent\n"
                "from engine.game import State\n"
                "import mylib.search\nfrom __future__ import annotations\n"
            ),
            "mylib/__init__.py": "",
            "mylib/search.py": "import heapq\n",
        },
    )
    assert foreign_imports(root) == []


def test_missing_package_is_named_with_file_and_line(tmp_path: Path) -> None:
    """`import torch` is refused with the module, file and line in the sentence."""
    root = _tree(tmp_path, {"bot.py": "import os\n\nimport torch.nn\n"})
    [found] = foreign_imports(root)
    assert (found.module, found.file, found.line) == ("torch.nn", "bot.py", 3)
    assert "'torch.nn'" in found.sentence() and "NumPy" in found.sentence()


def test_referee_internals_and_installed_server_packages_are_refused(tmp_path: Path) -> None:
    """Importing referee.server or sqlalchemy (installed, but not for bots) is refused."""
    root = _tree(
        tmp_path,
        {
            "bot.py": "from referee.server import app\nimport sqlalchemy\n"
            "from referee import storage\n"
        },
    )
    assert [f.module for f in foreign_imports(root)] == [
        "referee.server",
        "sqlalchemy",
        "referee.storage",
    ]


def test_optional_imports_are_not_refused(tmp_path: Path) -> None:
    """An import guarded by try/except ImportError is optional and allowed."""
    root = _tree(
        tmp_path, {"bot.py": "try:\n    import numba\nexcept ImportError:\n    numba = None\n"}
    )
    assert foreign_imports(root) == []


def test_syntax_errors_are_reported(tmp_path: Path) -> None:
    """A file that does not parse is refused with its name and line."""
    root = _tree(tmp_path, {"bot.py": "x = 1\ndef broken(:\n"})
    with pytest.raises(LayoutError, match=r"bot\.py line 2: SyntaxError"):
        foreign_imports(root)


def test_a_manifest_declaring_a_language_the_server_does_not_host_is_refused(
    tmp_path: Path,
) -> None:
    """An upload declaring Rust is refused naming the hosted languages and the way to play."""
    root = _tree(
        tmp_path, {"submission.json": '{"entry": "bot", "language": "rust"}', "bot.py": ""}
    )
    with pytest.raises(
        LayoutError, match=r"'rust'.*cpp, javascript, python only.*connect it with your token"
    ):
        find_entry(root)
    python = _tree(
        tmp_path / "py", {"submission.json": '{"entry": "bot", "language": "python"}', "bot.py": ""}
    )
    assert find_entry(python).name == "bot"


def test_a_cpp_or_javascript_manifest_names_a_source_file_at_the_top(tmp_path: Path) -> None:
    """A C++ or JavaScript upload's entry is its top-level source file, in that language."""
    cpp = _tree(
        tmp_path / "cpp",
        {"submission.json": '{"entry": "bot.cpp", "language": "cpp"}', "bot.cpp": "int main(){}"},
    )
    entry = find_entry(cpp)
    assert (entry.name, entry.language) == ("bot.cpp", "cpp")
    js = _tree(
        tmp_path / "js",
        {"submission.json": '{"entry": "bot.py", "language": "javascript"}', "bot.py": ""},
    )
    with pytest.raises(LayoutError, match=r'needs "entry": the top-level \.js file'):
        find_entry(js)
    missing = _tree(
        tmp_path / "missing",
        {"submission.json": '{"entry": "main.cpp", "language": "cpp"}', "bot.cpp": ""},
    )
    with pytest.raises(LayoutError, match="no such file"):
        find_entry(missing)
