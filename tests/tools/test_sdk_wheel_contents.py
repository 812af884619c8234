"""The SDK wheel (what ``/sdk`` serves and ``referee sdk wheel`` writes) holds the SDK, the
rules and the course's ``referee.game`` only: none of the server's source, no ``referee``
script that could not run without it, no server extra; and what it holds imports on its own.
The starter bot's README suggests nothing the wheel does not install."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from client_sdk._starter import write_starter
from referee.tools.sdkwheel import sdk_wheel

pytestmark = pytest.mark.slow  # builds the wheel with pip

#: Everything of ``referee`` a bot needs: the course's ``referee.game``.
REFEREE_KEPT = ("referee/__init__.py", "referee/py.typed", "referee/game/")

_IMPORT_ALL = """
import importlib, json, sys
root, names = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, root)
for name in names:
    importlib.import_module(name)
ours = {n: getattr(m, "__file__", None) or "" for n, m in list(sys.modules.items())
        if n.split(".")[0] in ("client_sdk", "engine", "referee")}
print(json.dumps(sorted(n for n, f in ours.items() if f and not f.startswith(root))))
"""


def test_the_sdk_wheel_holds_the_sdk_and_nothing_of_the_server(tmp_path: Path) -> None:
    """No referee.server, commands, web, sandbox...; no console script, no extra; the base
    dependencies only; every module in it imports from the wheel alone."""
    wheel = sdk_wheel(tmp_path / "cache")
    with zipfile.ZipFile(wheel.path) as archive:
        names = archive.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(meta).decode())
        archive.extractall(tmp_path / "unpacked")
    code = [n for n in names if ".dist-info/" not in n]
    referee = [n for n in code if n.startswith("referee/")]
    assert referee and all(n.startswith(REFEREE_KEPT) for n in referee), referee
    # The openings books `client_sdk play --openings` reads, beside the engine's book model.
    assert {"engine/records/openings.py", "engine/records/books/tetress.json"} <= set(code)
    assert {"client_sdk/__init__.py", "engine/__init__.py", "referee/game/__init__.py"} <= set(code)
    assert not [n for n in names if n.endswith("entry_points.txt")], "a script the SDK cannot run"
    assert metadata.get_all("Provides-Extra") is None
    requires = metadata.get_all("Requires-Dist") or []
    assert sorted(r.split(">")[0].split("<")[0] for r in requires) == [
        "grpcio", "numpy", "protobuf", "psutil",
    ]  # fmt: skip
    modules = [
        n.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for n in code
        if n.endswith(".py")
    ]
    root = str(tmp_path / "unpacked")
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, root, json.dumps(modules)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_starter_suggests_only_what_the_sdk_installs(tmp_path: Path) -> None:
    """The starter's README and test say to run the test as a script, and mention pytest only
    as something to install first."""
    write_starter(tmp_path / "my_bot", "my_bot", course=False)
    for text in ((tmp_path / "my_bot" / n).read_text() for n in ("README.md", "test_my_bot.py")):
        assert "python test_my_bot.py" in text
        assert "python -m pytest" not in text or "pip install pytest" in text
