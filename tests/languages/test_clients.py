"""The C++ and JavaScript clients: built from protos/ with their own tools, their example bots
pass the conformance kit and play a tournament against the Python bots."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.languages.toolchains import REFEREE, ROOT, conformance


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


#: How the bot is given its token: only TETROMINO_TOKEN in its environment, or only the flag
#: --token-file (the kit sets both variables; each way is checked alone here).
TOKEN_WAYS = {
    "environment": (["env", "-u", "TETROMINO_TOKEN_FILE"], []),
    "flag": (
        ["env", "-u", "TETROMINO_TOKEN_FILE", "-u", "TETROMINO_TOKEN"],
        ["--token-file", "{token_file}"],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("way", sorted(TOKEN_WAYS))
@pytest.mark.parametrize("language", ["cpp", "js"])
def test_the_token_comes_from_the_environment_or_a_file(
    request: pytest.FixtureRequest, language: str, way: str
) -> None:
    """Given its token only as TETROMINO_TOKEN, or only as --token-file FILE, each client's
    bot sends that token in its Hello and passes the kit."""
    before, after = TOKEN_WAYS[way]
    report = conformance(*before, *_command(request, language, "random_bot"), *after)
    checks = {c["name"]: c for c in report["checks"]}  # type: ignore[attr-defined]
    assert checks["handshake"]["ok"] is True, checks["handshake"]
    assert report["ok"] is True, [c for c in checks.values() if not c["ok"]]


def _referee(*args: str) -> str:
    done = subprocess.run([*REFEREE, *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_python_cpp_and_js_bots_play_a_tournament(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A round robin of the Python, C++ and JavaScript greedy bots (sandboxed where the host
    allows) ends every game by the rules, each bot under its registered name."""
    db = ["--db", str(tmp_path / "arena.db")]
    for language in ("cpp", "js"):
        command = "cmd:" + " ".join(_command(request, language, "greedy_bot"))
        _referee("bot", "add", f"{language}_greedy", command, *db, "--create")
    bots = ["client_sdk.examples.greedy_bot", "cpp_greedy", "js_greedy"]
    _referee("tournament", "quick", *db, "--name", "langs", "--no-progress", *bots)
    listed = _referee("games", *db, "--json", "--tournament", "langs")
    games = [json.loads(line) for line in listed.splitlines() if line.startswith("{")]
    assert len(games) == 6, listed
    assert {g["verdict"] for g in games} == {"normal"}, games
    names = {seat.split("@")[0] for g in games for seat in g["seats"]}
    assert names == {"greedy_bot", "cpp_greedy", "js_greedy"}


@pytest.mark.slow
def test_cpp_and_js_bots_report_their_thinking(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Every move of the C++ and JavaScript greedy bots carries its think record (depth,
    nodes, score, principal variation, text), kept in the game's record."""
    record = tmp_path / "game.json"
    bots = ["cmd:" + " ".join(_command(request, lang, "greedy_bot")) for lang in ("cpp", "js")]
    _referee("match", *bots, "--record", str(record))
    moves = json.loads(record.read_text())["moves"]
    assert len(moves) > 2
    for move in moves:
        search = move["search"]
        assert search["depth"] == 1 and search["nodes"] > 0, move
        assert search["pv"] == [move["san"]] and " best of " in search["text"], move
