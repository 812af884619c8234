"""A tournament on submitted code only: entries closed before a later upload, so the games
use the versions accepted by then; who may read which bot's output."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from hostile import GOOD_SDK_BOT
from upload_harness import env, mine, my_output, submit_cli, upload_server, write_tree

from referee.storage import submissions as rows

pytestmark = pytest.mark.slow


def _referee(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        env=env(),
        timeout=300,
    )


def test_tournament_plays_versions_accepted_before_entries_close(tmp_path: Path) -> None:
    """alice's second upload comes after entries close: every game plays her first version;
    the games record the exact versions; each student reads only their own bot's output,
    the instructor sees everything."""
    write_tree(
        tmp_path,
        {
            "alice1/bot.py": GOOD_SDK_BOT + "\nprint('output of alice-v1')\n",
            "alice2/bot.py": GOOD_SDK_BOT + "\nprint('output of alice-v2')\n",
            "bob/bot.py": GOOD_SDK_BOT + "\nprint('output of bob-v1')\n",
        },
    )

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice", "bob", "carol")) as up:
            a1 = await submit_cli(up, "alice", str(tmp_path / "alice1/bot.py"), "--name", "ann")
            b1 = await submit_cli(up, "bob", str(tmp_path / "bob/bot.py"), "--name", "bo")
            assert a1["status"] == b1["status"] == "accepted"
            created = await asyncio.to_thread(
                _referee,
                up.db_path,
                "tournament",
                "create",
                "cup",
                "ann",
                "bo",
                "--entries-close",
                "now",
                "--param",
                "turn_limit=12",
            )
            assert created.returncode == 0, created.stderr
            a2 = await submit_cli(up, "alice", str(tmp_path / "alice2/bot.py"), "--name", "ann")
            assert a2["status"] == "accepted" and a2["version"] != a1["version"]
            ran = await asyncio.to_thread(_referee, up.db_path, "tournament", "run", "cup")
            assert ran.returncode == 0, ran.stdout + ran.stderr

            shown = await asyncio.to_thread(_referee, up.db_path, "bot", "show", "ann", "--json")
            versions = {v["version"]: v for v in json.loads(shown.stdout)["versions"]}
            kinds = {v: sorted(g["kind"] for g in versions[v]["games"]) for v in versions}
            # The instructor sees each version's validation games (one from each seat) beside
            # its tournament games.
            assert kinds[a1["version"]] == ["rated", "rated", "validation", "validation"]
            assert kinds[a2["version"]] == ["validation", "validation"]
            check = versions[a2["version"]]["validation_game_id"]
            # The submission names its last validation game, where the upload played BLUE.
            assert check in [g["game_id"] for g in versions[a2["version"]]["games"]]
            assert versions[a2["version"]]["playing"] is True  # plays from now on
            shown = await asyncio.to_thread(
                _referee, up.db_path, "game", "show", check, "--output", "--json"
            )
            game_shown = json.loads(shown.stdout)
            assert game_shown["kind"] == "validation" and "alice-v2" in game_shown["output"][1]
            public = await asyncio.to_thread(_referee, up.db_path, "games", "--json")
            everything = await asyncio.to_thread(
                _referee, up.db_path, "games", "--validation", "--json"
            )
            assert check not in public.stdout and check in everything.stdout
            listing = await asyncio.to_thread(_referee, up.db_path, "bot", "list", "--json")
            labels = {f"{v['bot']}@{v['version']}" for v in json.loads(listing.stdout)}
            assert {f"ann@{a1['version']}", f"ann@{a2['version']}", f"bo@{b1['version']}"} <= labels

            games = up.repo.list_games(limit=None)
            assert len(games) == 2
            played = {s.bot_version_id for g in games for s in g.seats}
            first = rows.get_submission(up.repo.db, "ann", a1["version"]).bot_version_id
            bob = rows.get_submission(up.repo.db, "bo", b1["version"]).bot_version_id
            assert played == {first, bob}

            alice_view = await mine(up, up.tokens["alice"])
            assert {v.bot for v in alice_view.versions} == {"ann"}
            rated = [g for g in alice_view.games if g.kind == "rated"]
            checks = [g for g in alice_view.games if g.kind == "validation"]
            # Both tournament games, and the validation games of both her versions (one from
            # each seat).
            assert len(rated) == 2 and len(checks) == 4
            assert {g.tournament for g in rated} == {"cup"}
            game = rated[0]
            out = await my_output(up, up.tokens["alice"], game.game_id)
            assert out.bot.startswith("ann@") and "alice-v1" in out.output
            assert "bob-v1" not in out.output
            carol_view = await mine(up, up.tokens["carol"])
            assert list(carol_view.versions) == [] and list(carol_view.games) == []
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await my_output(up, up.tokens["carol"], game.game_id)
            assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED

    asyncio.run(main())


def test_a_tournament_cannot_start_before_entries_close(tmp_path: Path) -> None:
    """`tournament run` before the deadline refuses with the time entries close."""
    db = tmp_path / "arena.db"
    made = _referee(
        db,
        "tournament",
        "create",
        "later",
        "client_sdk.examples.random_bot",
        "client_sdk.examples.greedy_bot",
        "--entries-close",
        "2999-01-01T00:00Z",
        "--create",
    )
    assert made.returncode == 0, made.stderr
    ran = _referee(db, "tournament", "run", "later", "--no-progress")
    assert ran.returncode != 0
    assert "entries are open until 2999-01-01T00:00:00Z" in ran.stderr
