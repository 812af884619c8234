"""The server's ladder plays submitted bots: their latest accepted versions, launched in the
sandbox by `referee serve`, stored as rated games naming the exact versions; rejected
versions never play."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import GOOD_SDK_BOT
from upload_harness import cli, env, write_tree

from client_sdk.proto import submissions_pb2 as spb
from client_sdk.proto import submissions_pb2_grpc
from referee.commands.main import build_parser
from referee.storage import Repository
from referee.tournament.ladder import METHOD

CRASHER = GOOD_SDK_BOT + "\nraise RuntimeError('broken upload')\n"


def test_serve_documents_the_ladder_rate() -> None:
    """`referee serve` takes the ladder's rate and concurrency for submitted bots."""
    args = build_parser().parse_args(
        ["serve", "--ladder-games-per-hour", "12", "--ladder-concurrency", "2"]
    )
    assert (args.ladder_games_per_hour, args.ladder_concurrency) == (12, 2)
    assert build_parser().parse_args(["serve"]).ladder_games_per_hour == 30


def _referee(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
    )


def _players(db: Path, names: tuple[str, ...]) -> dict[str, str]:
    tokens = {}
    for name in names:
        added = _referee("player", "add", name, "--db", str(db), "--create")
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip().splitlines()[-1]
    return tokens


async def _upload(address: str, token: str, path: Path, name: str) -> dict[str, str]:
    _, out, err = await cli(
        "submit", "--server", address, "--token", token, "--json", "--name", name, str(path)
    )
    result: dict[str, str] = json.loads(out.strip().splitlines()[-1])
    result["stderr"] = err
    return result


async def _games_listed(address: str, token: str) -> set[str]:
    import grpc

    async with grpc.aio.insecure_channel(address) as channel:
        stub = submissions_pb2_grpc.SubmissionsStub(channel)
        reply = await stub.ListMine(
            spb.ListMineRequest(), metadata=[("authorization", f"Bearer {token}")]
        )
    return {g.game_id for g in reply.games if g.kind == "rated"}


@pytest.mark.slow
def test_referee_serve_plays_accepted_versions_on_the_ladder(tmp_path: Path) -> None:
    """With nobody connected, `referee serve --submissions` plays ladder games between the two
    accepted uploads at the rate it is given; ann's later, rejected upload and carol's only
    (rejected) one never play; every game names the exact versions, seats alternate, the
    ladder rates both, the owners list the games, and SIGTERM stops the server cleanly."""
    db = tmp_path / "arena.db"
    tokens = _players(db, ("alice", "bob", "carol"))
    write_tree(tmp_path, {"a.py": GOOD_SDK_BOT, "b.py": GOOD_SDK_BOT + "\n# b\n", "c.py": CRASHER})
    address_file = tmp_path / "address"
    log = (tmp_path / "serve.log").open("w")
    # At most a game a second, one at a time: the test's rate, not the default.
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "serve", "--db", str(db),
         "--submissions", str(tmp_path / "store"), "--listen", "127.0.0.1:0", "--no-web",
         "--address-file", str(address_file), "--game", "tetress", "--param", "turn_limit=12",
         "--ladder-games-per-hour", "3600", "--pair", "none", "--shutdown-grace", "20"],
        stdout=log, stderr=subprocess.STDOUT, env=env(), text=True,
    )  # fmt: skip

    async def main() -> tuple[list[str], set[str]]:
        async with asyncio.timeout(60):
            while not (address_file.exists() and address_file.read_text().strip()):
                assert serve.poll() is None, (tmp_path / "serve.log").read_text()
                await asyncio.sleep(0.1)
        address = address_file.read_text().split()[0]
        ann = await _upload(address, tokens["alice"], tmp_path / "a.py", "ann")
        bo = await _upload(address, tokens["bob"], tmp_path / "b.py", "bo")
        broken = await _upload(address, tokens["alice"], tmp_path / "c.py", "ann")
        never = await _upload(address, tokens["carol"], tmp_path / "c.py", "cee")
        assert ann["status"] == bo["status"] == "accepted", (ann, bo)
        assert broken["status"] == never["status"] == "rejected", (broken, never)
        repo = Repository.open(str(db))
        try:
            async with asyncio.timeout(150):
                while len(repo.list_games(limit=None)) < 2:
                    await asyncio.sleep(0.5)
        finally:
            repo.close()
        listed = await _games_listed(address, tokens["alice"])
        return [f"ann@{ann['version']}", f"bo@{bo['version']}"], listed

    try:
        playing, listed = asyncio.run(main())
    finally:
        serve.terminate()
        code = serve.wait(60)
        log.close()
    assert code == 0, (tmp_path / "serve.log").read_text()
    repo = Repository.open(str(db))
    try:
        labels = {v.id: v.label for v in repo.list_bot_versions()}
        games = repo.list_games(limit=None)
        assert len(games) >= 2 and all(g.plies <= 12 for g in games)
        for g in games:
            assert sorted(labels[s.bot_version_id] for s in g.seats) == playing
            record = repo.get_game(g.uid).record_text or ""
            assert all(v in record for v in playing) and '[Event "ladder"]' in record
        assert games[0].seats[0].bot_version_id != games[1].seats[0].bot_version_id
        assert {g.uid for g in games[:2]} <= listed
        table = repo.latest_ratings(METHOD, ladder="main")
        assert table is not None
        assert sorted(labels[r.bot_version_id] for r in table.rows) == playing
        # The validation games are kept too, apart from the rated ones: the two accepted
        # uploads played one from each seat, the two rejected ones stopped at their first.
        assert len(repo.list_games(limit=None, include_validation=True)) == len(games) + 6
    finally:
        repo.close()
