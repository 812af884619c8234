"""The C++ and JavaScript clients: built from protos/ with their own tools, their example bots
pass the conformance kit and play a tournament against the Python bots."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import REFEREE, ROOT, conformance


def _command(request: pytest.FixtureRequest, language: str, bot: str) -> list[str]:
    if language == "cpp":
        build: Path = request.getfixturevalue("cpp_bots")
        return [str(build / bot)]
    folder: Path = request.getfixturevalue("js_bots")
    return ["node", str(folder), bot.removesuffix("_bot")]


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["random_bot", "greedy_bot"])
@pytest.mark.parametrize("language", ["cpp", "js"])
def test_example_bot_passes_the_conformance_kit(
    request: pytest.FixtureRequest, language: str, bot: str
) -> None:
    """Each example bot of each language passes every check of the kit."""
    report = conformance(*_command(request, language, bot))
    failed = [c for c in report["checks"] if not c["ok"]]  # type: ignore[attr-defined]
    assert report["ok"] is True, failed
    assert len(report["checks"]) == 7  # type: ignore[arg-type]


@pytest.mark.slow
def test_python_cpp_and_js_bots_play_a_tournament(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A round robin of the Python, C++ and JavaScript greedy bots ends every game by the rules."""
    bots = [
        "client_sdk.examples.greedy_bot",
        "cmd:" + " ".join(_command(request, "cpp", "greedy_bot")),
        "cmd:" + " ".join(_command(request, "js", "greedy_bot")),
    ]
    db = str(tmp_path / "arena.db")
    run = [*REFEREE, "tournament", "quick", "--db", db, "--create", "--name", "langs"]
    done = subprocess.run([*run, "--no-progress", *bots], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = subprocess.run(
        [*REFEREE, "games", "--db", db, "--json", "--tournament", "langs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    games = [json.loads(line) for line in listed.stdout.splitlines() if line.startswith("{")]
    assert len(games) == 6, listed.stdout
    assert {g["verdict"] for g in games} == {"normal"}, games
    assert all(len(g["seats"]) == 2 and g["plies"] > 0 for g in games), games
