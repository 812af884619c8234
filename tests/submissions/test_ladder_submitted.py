"""The server's ladder plays submitted bots: their latest accepted versions, launched in the
sandbox, stored as rated games naming the exact versions; rejected versions never play."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import GOOD_SDK_BOT
from upload_harness import cli, env, mine, submit_cli, upload_server, write_tree

from engine.registry import load_game
from referee.commands.main import build_parser
from referee.match.clock import TimeControl
from referee.server.autoplay import AutoplaySettings, SubmittedLadder
from referee.server.casual import CasualRecorder
from referee.storage import Repository
from referee.storage import submissions as rows
from referee.tournament.ladder import METHOD

CRASHER = GOOD_SDK_BOT + "\nraise RuntimeError('broken upload')\n"


def test_serve_documents_the_ladder_rate() -> None:
    """`referee serve` takes the ladder's rate and concurrency for submitted bots."""
    args = build_parser().parse_args(
        ["serve", "--ladder-games-per-hour", "12", "--ladder-concurrency", "2"]
    )
    assert (args.ladder_games_per_hour, args.ladder_concurrency) == (12, 2)
    assert build_parser().parse_args(["serve"]).ladder_games_per_hour == 30


@pytest.mark.slow
def test_ladder_plays_accepted_versions_only_and_records_them(tmp_path: Path) -> None:
    """Two students' accepted bots meet on the ladder while nobody is connected; ann's later,
    rejected upload and carol's only (rejected) upload never play; every game names the exact
    versions and feeds the ladder's ratings, and the owners see the games with `mine`."""
    write_tree(
        tmp_path,
        {"good.py": GOOD_SDK_BOT, "other.py": GOOD_SDK_BOT + "\n# bob\n", "bad.py": CRASHER},
    )

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice", "bob", "carol")) as up:
            ann = await submit_cli(up, "alice", str(tmp_path / "good.py"), "--name", "ann")
            bob = await submit_cli(up, "bob", str(tmp_path / "other.py"), "--name", "bo")
            broken = await submit_cli(up, "alice", str(tmp_path / "bad.py"), "--name", "ann")
            never = await submit_cli(up, "carol", str(tmp_path / "bad.py"), "--name", "cee")
            assert ann["status"] == bob["status"] == "accepted"
            assert broken["status"] == never["status"] == "rejected"
            playing = {
                rows.get_submission(up.repo.db, "ann", ann["version"]).bot_version_id,
                rows.get_submission(up.repo.db, "bo", bob["version"]).bot_version_id,
            }
            settings = AutoplaySettings(
                game=load_game("tetress", turn_limit=16),
                time_control=TimeControl(game_time_s=60),
                memory_mb=None,
                games_per_hour=36_000,
            )
            ladder = SubmittedLadder(up.repo, settings, CasualRecorder(up.repo))
            assert {v.id for v in ladder.entrants()} == playing
            running = asyncio.create_task(ladder.run())
            async with asyncio.timeout(150):
                while ladder.stored < 2:
                    await asyncio.sleep(0.2)
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            await ladder.drain(30)

            games = up.repo.list_games(limit=None)
            assert len(games) >= 2
            for g in games:
                assert {s.bot_version_id for s in g.seats} == playing
                record = up.repo.get_game(g.uid).record_text or ""
                assert f"ann@{ann['version']}" in record and f"bo@{bob['version']}" in record
            # Seats alternate between a pair's games.
            assert games[0].seats[0].bot_version_id != games[1].seats[0].bot_version_id
            table = up.repo.latest_ratings(METHOD, ladder="main")
            assert table is not None and {r.bot_version_id for r in table.rows} == playing
            alice = await mine(up, up.tokens["alice"])
            ladder_games = {g.game_id for g in alice.games if g.kind == "rated"}
            assert ladder_games == {g.uid for g in games}

    asyncio.run(main())


def _referee(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
    )


@pytest.mark.slow
def test_referee_serve_runs_the_ladder_of_submitted_bots(tmp_path: Path) -> None:
    """`referee serve --submissions` plays ladder games between two uploads with nobody
    connected, at the rate it is given, stores them rated with the exact versions, and stops
    cleanly on SIGTERM."""
    db = tmp_path / "arena.db"
    tokens = {}
    for name in ("alice", "bob"):
        added = _referee("player", "add", name, "--db", str(db), "--create")
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip().splitlines()[-1]
    write_tree(tmp_path, {"a.py": GOOD_SDK_BOT, "b.py": GOOD_SDK_BOT + "\n# b\n"})
    address_file = tmp_path / "address"
    log = (tmp_path / "serve.log").open("w")
    # A game a second at most: the test's rate, not the default.
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "serve", "--db", str(db),
         "--submissions", str(tmp_path / "store"), "--listen", "127.0.0.1:0", "--no-web",
         "--address-file", str(address_file), "--game", "tetress", "--param", "turn_limit=12",
         "--ladder-games-per-hour", "3600", "--pair", "none", "--shutdown-grace", "20"],
        stdout=log, stderr=subprocess.STDOUT, env=env(), text=True,
    )  # fmt: skip

    async def main() -> list[str]:
        async with asyncio.timeout(60):
            while not (address_file.exists() and address_file.read_text().strip()):
                assert serve.poll() is None, (tmp_path / "serve.log").read_text()
                await asyncio.sleep(0.1)
        address = address_file.read_text().split()[0]
        versions = []
        for name, file in (("alice", "a.py"), ("bob", "b.py")):
            _, out, err = await cli(
                "submit", "--server", address, "--token", tokens[name], "--json",
                str(tmp_path / file),
            )  # fmt: skip
            result = json.loads(out.strip().splitlines()[-1])
            assert result["status"] == "accepted", (result, err)
            versions.append(f"{result['bot']}@{result['version']}")
        repo = Repository.open(str(db))
        try:
            async with asyncio.timeout(120):
                while not repo.list_games(limit=None):
                    await asyncio.sleep(0.5)
        finally:
            repo.close()
        return versions

    try:
        versions = asyncio.run(main())
    finally:
        serve.terminate()
        code = serve.wait(60)
        log.close()
    assert code == 0, (tmp_path / "serve.log").read_text()
    repo = Repository.open(str(db))
    try:
        games = repo.list_games(limit=None)
        assert games and all(g.plies <= 12 for g in games)
        for g in games:
            record = repo.get_game(g.uid).record_text or ""
            assert all(v in record for v in versions) and '[Event "ladder"]' in record
        assert len(repo.list_games(limit=None, include_validation=True)) == len(games) + 2
    finally:
        repo.close()
