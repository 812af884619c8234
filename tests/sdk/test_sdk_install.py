"""The bot author's install: `pip install tetromino-arena` with no extras runs any bot.

The server's dependencies live in the `server` extra. These tests start fresh interpreters in
which every installed package outside the base dependencies (and what they pull in) fails to
import, as on a machine with only the bare install, and play real games there."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import pytest

from engine.registry import load_game
from referee.play.local import play_match
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SITE = Path(__file__).parent / "bare_install"
EXAMPLES = REPO / "client_sdk" / "examples"

#: The referee's own dependencies, which must never be loaded by what a bot imports.
SERVER_MODULES = ("sqlalchemy", "alembic", "psycopg", "openskill", "rich", "structlog", "networkx")


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _closure(names: Iterable[str]) -> set[str]:
    """The distributions ``names`` need, transitively (as installed here)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def _absent_modules() -> list[str]:
    """Top-level modules installed here that a bare install of the project would not have."""
    base = _closure(_name(r) for r in PYPROJECT["project"]["dependencies"])
    absent = set()
    for module, dists in metadata.packages_distributions().items():
        if module in {"engine", "referee", "client_sdk"} or module.startswith("_"):
            continue
        if not any(_name(d) in base for d in dists):
            absent.add(module)
    return sorted(absent)


def _bare_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), str(REPO)])
    env["TETROMINO_ABSENT_MODULES"] = ",".join(_absent_modules())
    return env


def test_dependencies_split_into_base_server_and_dev() -> None:
    """Base holds only what bots need; the server extra holds the server's; dev includes it."""
    base = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extras = PYPROJECT["project"]["optional-dependencies"]
    server = {_name(r) for r in extras["server"]}
    assert base == {"grpcio", "protobuf", "psutil", "numpy"}
    assert {"sqlalchemy", "alembic", "psycopg", "openskill", "rich", "structlog"} <= server
    assert "tetromino-arena[server]" in extras["dev"]
    assert _absent_modules(), "the simulated bare install must leave something out"
    assert {"sqlalchemy", "structlog", "rich"} <= set(_absent_modules())


@pytest.mark.slow
def test_importing_the_sdk_loads_no_server_dependency() -> None:
    """A fresh interpreter importing the SDK, its testing module and referee.game loads none
    of the server's packages (checked with every package installed, then with a bare install)."""
    code = (
        "import sys, json\n"
        "import client_sdk, client_sdk.testing, client_sdk.__main__, referee.game\n"
        "print(json.dumps(sorted({m.partition('.')[0] for m in sys.modules})))\n"
    )
    full = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = set(json.loads(full.stdout.splitlines()[-1]))
    assert {"client_sdk", "engine", "grpc"} <= loaded
    assert not loaded & set(SERVER_MODULES), sorted(loaded & set(SERVER_MODULES))
    bare = subprocess.run(
        [sys.executable, "-c", code], env=_bare_env(), capture_output=True, text=True, timeout=60
    )
    assert bare.returncode == 0, bare.stderr
    # The simulated bare install really lacks the server's packages.
    server = subprocess.run(
        [sys.executable, "-c", "import structlog"], env=_bare_env(), capture_output=True, text=True
    )
    assert server.returncode == 1 and "No module named 'structlog'" in server.stderr


@pytest.mark.slow
def test_a_bare_install_plays_local_games_with_sdk_and_course_bots() -> None:
    """With only the base dependencies, play_local runs an SDK bot against a course bot."""
    code = (
        "from client_sdk.testing import play_local\n"
        "g = play_local('client_sdk.examples.greedy_bot', 'course-random')\n"
        "print(getattr(g.verdict, 'value', g.verdict), len(g.moves))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_bare_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    verdict, moves = done.stdout.split()
    assert verdict in {"normal", "turn_limit"} and int(moves) > 0


def _bare_bot(bot: str) -> BotSpec:
    """``python -m client_sdk BOT`` as a shell command run with the bare install."""
    env = _bare_env()
    assignments = [f"{k}={shlex.quote(env[k])}" for k in ("PYTHONPATH", "TETROMINO_ABSENT_MODULES")]
    return BotSpec(
        "command",
        f"env {' '.join(assignments)} {shlex.quote(sys.executable)} -m client_sdk "
        f"--server {{server}} --token {{token}} {shlex.quote(bot)}",
    )


@pytest.mark.slow
def test_bare_install_bots_play_a_real_referee_over_grpc() -> None:
    """`python -m client_sdk` with only the base install (a course package and an SDK bot)
    finishes a game against a real referee server on 127.0.0.1."""
    specs = [
        _bare_bot(str(EXAMPLES / "course_greedy")),
        _bare_bot("client_sdk.examples.random_bot"),
    ]
    # Uncontained: the simulated bare install is a folder on PYTHONPATH the sandbox does not
    # mount (the sandbox itself is tested in tests/sandbox/).
    result = asyncio.run(play_match(specs, load_game("tetress"), isolation=Isolation.NONE))
    end = result.report.end
    assert end is not None
    assert end.verdict.value in {"normal", "turn_limit"}, (end.reason, result.output(0))
    assert len(result.report.moves) > 0


@pytest.mark.slow
def test_the_referee_command_names_the_server_extra_when_it_is_missing() -> None:
    """On a bare install, `referee` says in one line what this install runs (the SDK's
    commands) and where the referee's come from, instead of a traceback or an extra to install
    from an index that does not have it."""
    done = subprocess.run(
        [sys.executable, "-m", "referee.commands.main", "games"],
        env=_bare_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "python -m client_sdk" in done.stderr and "reproduce" in done.stderr
    assert "deploy/install.sh" in done.stderr and "tetromino-arena[server]" not in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
