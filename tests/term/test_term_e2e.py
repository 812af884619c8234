"""The instructor's term end to end, every part real: a roster imported, students upload over
gRPC with their roster tokens, the server's ladder plays their bots, entries close, a later
upload is not played, the final tournament plays the frozen versions, and `referee grade
--csv` and `referee similarity` report on those versions (a copied bot flagged, an unrelated
one not). Quick bots, short games, a handful of each."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from disguise import disguised_copy

from referee.storage import Repository

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "bots"
ROSTER = """login,display name,team,role
prof,Professor Plum,,instructor
ann,Ann A,red,student
bea,Bea B,red,student
cat,Cat C,blue,student
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _referee(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
    )


def _submit(address: str, token: str, path: Path, name: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "client_sdk", "submit", "--server", address, "--token", token,
         "--json", "--name", name, str(path)],
        capture_output=True, text=True, timeout=300, env=_env(),
    )  # fmt: skip
    result: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _wait_for(check: object, what: str, seconds: float, proc: subprocess.Popen[str]) -> None:
    async def poll() -> None:
        async with asyncio.timeout(seconds):
            while not check():  # type: ignore[operator]
                assert proc.poll() is None, f"the server stopped while waiting for {what}"
                await asyncio.sleep(0.5)

    asyncio.run(poll())


def test_a_term_from_roster_to_grades_and_similarity(tmp_path: Path) -> None:
    """Roster, uploads, ladder, entries close, final on frozen versions, grades, similarity."""
    db = str(tmp_path / "arena.db")
    (tmp_path / "roster.csv").write_text(ROSTER)
    tokens_file = tmp_path / "tokens.csv"
    done = _referee("class", "import", str(tmp_path / "roster.csv"), "--tokens",
                    str(tokens_file), "--db", db, "--create")  # fmt: skip
    assert done.returncode == 0, done.stderr
    tokens = {r["login"]: r["token"] for r in csv.DictReader(tokens_file.open())}
    assert set(tokens) == {"prof", "ann", "bea", "cat"}

    copy = disguised_copy(BOTS / "hugger", tmp_path / "bea_bot")
    address_file = tmp_path / "address"
    log = (tmp_path / "serve.log").open("w")
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "serve", "--db", db,
         "--submissions", str(tmp_path / "store"), "--listen", "127.0.0.1:0", "--no-web",
         "--address-file", str(address_file), "--game", "tetress", "--param", "turn_limit=16",
         "--ladder-games-per-hour", "3600", "--pair", "none", "--shutdown-grace", "20"],
        stdout=log, stderr=subprocess.STDOUT, env=_env(), text=True,
    )  # fmt: skip
    repo = Repository.open(db)
    try:
        _wait_for(lambda: address_file.exists() and address_file.read_text().strip(),
                  "its address", 60, serve)  # fmt: skip
        address = address_file.read_text().split()[0]
        ann = _submit(address, tokens["ann"], BOTS / "hugger", "ann-bot")
        bea = _submit(address, tokens["bea"], copy, "bea-bot")
        cat = _submit(address, tokens["cat"], BOTS / "spreader", "cat-bot")
        assert ann["status"] == bea["status"] == cat["status"] == "accepted", (ann, bea, cat)
        _wait_for(lambda: len(repo.list_games(limit=None)) >= 2, "ladder games", 300, serve)
        created = _referee(
            "tournament", "create", "final", "ann-bot", "bea-bot", "cat-bot",
            "--entries-close", "now", "--param", "turn_limit=30", "--db", db,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        late = _submit(address, tokens["ann"], BOTS / "lineclear", "ann-bot")
        assert late["status"] == "accepted" and late["version"] != ann["version"], late
    finally:
        serve.send_signal(signal.SIGTERM)
        code = serve.wait(120)
        log.close()
    assert code == 0, (tmp_path / "serve.log").read_text()
    ladder = [g for g in repo.list_games(limit=None) if g.tournament_id is None]
    assert len(ladder) >= 2

    ran = _referee("tournament", "run", "final", "--db", db)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    frozen = {"ann-bot": ann["version"], "bea-bot": bea["version"], "cat-bot": cat["version"]}
    final = repo.get_tournament("final")
    entrants = {v.bot_name: v.version for v in repo.tournament_entrants(final.id)}
    assert entrants == frozen
    board = _referee("leaderboard", "final", "--db", db)
    assert "rests on 6 games" in board.stdout, board.stdout

    grades = tmp_path / "grades.csv"
    graded = _referee("grade", "--tournament", "final", "--pairs", "1", "--csv", str(grades),
                      "--db", db)  # fmt: skip
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {r["login"]: r for r in csv.DictReader(grades.open())}
    assert set(rows) == {"ann", "bea", "cat"}
    for login, bot in (("ann", "ann-bot"), ("bea", "bea-bot"), ("cat", "cat-bot")):
        assert rows[login]["version"] == frozen[bot]
        assert rows[login]["reference-L1_games"] == "2"
        assert rows[login]["grade"] in {"0", "1", "2", "3"}

    similar = _referee("similarity", "--tournament", "final", "--positions", "3", "--json",
                       "--db", db)  # fmt: skip
    assert similar.returncode == 0, similar.stderr
    report = json.loads(similar.stdout.strip().splitlines()[-1])
    flagged = [{p["a"].split(":")[0], p["b"].split(":")[0]} for p in report["flagged"]]
    assert flagged == [{"ann", "bea"}], report["pairs"]
    pair = report["flagged"][0]
    assert pair["code"] >= 0.9 and pair["behaviour"] == 1.0 and pair["fragments"]
    repo.close()
