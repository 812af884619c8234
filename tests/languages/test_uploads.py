"""C++ and JavaScript uploads to a real `referee serve --submissions`: built in the sandbox,
validated, accepted and played on the ladder like Python uploads; a compile error is the
student's verdict with the compiler's first errors. The web pages show their game and bots."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from referee.storage import Repository
from referee.tournament.ladder import METHOD
from tests.languages.toolchains import CPP, JS
from tests.sandbox.sandbox_required import require_sandbox
from tests.submissions.upload_harness import cli, env

pytestmark = pytest.mark.slow

BROKEN = "#include <cstdio>\nint main() { return not_declared_here; }\n"


def _players(db: Path, names: tuple[str, ...]) -> dict[str, str]:
    tokens = {}
    for name in names:
        added = subprocess.run(
            [sys.executable, "-m", "referee.commands.main", "player", "add", name, "--db",
             str(db), "--create"],
            capture_output=True, text=True, timeout=120, env=env(),
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip().splitlines()[-1]
    return tokens


async def _submit(address: str, token: str, *args: str) -> dict[str, str]:
    _, out, err = await cli("submit", "--server", address, "--token", token, "--json", *args)
    result: dict[str, str] = json.loads(out.strip().splitlines()[-1])
    result["stderr"] = err
    return result


def _sources(tmp_path: Path) -> dict[str, Path]:
    """The C++ and JS greedy examples as a student keeps them, and a C++ file that fails."""
    cpp = tmp_path / "cpp" / "greedy_bot.cpp"
    cpp.parent.mkdir()
    shutil.copy(CPP / "examples" / "greedy_bot.cpp", cpp)
    # The JS example requires ../src/client: the server bundles the client beside bot/.
    js = tmp_path / "js" / "examples" / "greedy_bot.js"
    js.parent.mkdir(parents=True)
    shutil.copy(JS / "examples" / "greedy_bot.js", js)
    broken = tmp_path / "broken" / "bot.cpp"
    broken.parent.mkdir()
    broken.write_text(BROKEN)
    return {"cpp": cpp, "js": js, "broken": broken}


def test_cpp_and_js_uploads_are_built_validated_and_play_on_the_ladder(
    cpp_bots: Path, js_bots: Path, tmp_path: Path
) -> None:
    """The C++ and JS greedy examples uploaded over gRPC are built in the sandbox, accepted
    after their validation games and play a rated ladder game; a compile error is rejected
    with the compiler's message in the submit answer and in `mine`."""
    require_sandbox()
    db = tmp_path / "arena.db"
    tokens = _players(db, ("alice", "bob", "carol"))
    files = _sources(tmp_path)
    address_file = tmp_path / "address"
    log = (tmp_path / "serve.log").open("w")
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "serve", "--db", str(db),
         "--submissions", str(tmp_path / "store"), "--listen", "127.0.0.1:0", "--no-web",
         "--address-file", str(address_file), "--game", "tetress", "--param", "turn_limit=12",
         "--ladder-games-per-hour", "3600", "--pair", "none", "--shutdown-grace", "20"],
        stdout=log, stderr=subprocess.STDOUT, env=env(), text=True,
    )  # fmt: skip

    async def main() -> tuple[list[str], str]:
        async with asyncio.timeout(60):
            while not (address_file.exists() and address_file.read_text().strip()):
                assert serve.poll() is None, (tmp_path / "serve.log").read_text()
                await asyncio.sleep(0.1)
        address = address_file.read_text().split()[0]
        cpp = await _submit(
            address, tokens["alice"], "--language", "cpp", "--name", "cee", str(files["cpp"])
        )
        js = await _submit(
            address, tokens["bob"], "--language", "javascript", "--name", "jay", str(files["js"])
        )
        broken = await _submit(address, tokens["carol"], "--language", "cpp", str(files["broken"]))
        assert cpp["status"] == js["status"] == "accepted", (cpp, js)
        assert broken["status"] == "rejected", broken
        assert "C++ upload: the C++ build failed" in broken["reason"]
        assert "not_declared_here" in broken["reason"] and "error" in broken["reason"]
        _, mine, _ = await cli("mine", "--server", address, "--token", tokens["carol"])
        repo = Repository.open(str(db))
        try:
            async with asyncio.timeout(300):
                while len(repo.list_games(limit=None)) < 1:
                    await asyncio.sleep(0.5)
        finally:
            repo.close()
        return [f"cee@{cpp['version']}", f"jay@{js['version']}"], mine

    try:
        playing, mine = asyncio.run(main())
    finally:
        serve.terminate()
        code = serve.wait(60)
        log.close()
    assert code == 0, (tmp_path / "serve.log").read_text()
    assert "not_declared_here" in mine
    repo = Repository.open(str(db))
    try:
        labels = {v.id: v.label for v in repo.list_bot_versions()}
        game = repo.list_games(limit=None)[0]
        assert sorted(labels[s.bot_version_id] for s in game.seats) == playing
        record = repo.get_game(game.uid).record_text or ""
        assert '[Event "ladder"]' in record and "fault" not in record.lower()
        table = repo.latest_ratings(METHOD, ladder="main")
        assert table is not None
        assert sorted(labels[r.bot_version_id] for r in table.rows) == playing
        bots = {v.label: v.bot_id for v in repo.list_bot_versions()}
    finally:
        repo.close()
    pages = _web_pages(db, tmp_path, [f"/games/uid/{game.uid}", f"/bots/{bots[playing[0]]}"])
    assert all("cee" in page and "jay" in page for page in pages)


def _web_pages(db: Path, tmp_path: Path, paths: list[str]) -> list[str]:
    """The web front's pages at ``paths``, served by `referee web` on the same database."""
    address = tmp_path / "web-address"
    web = subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "web", "--db", str(db), "--listen",
         "127.0.0.1:0", "--address-file", str(address)],
        env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (address.exists() and address.read_text().strip()):
            assert web.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        url = address.read_text().split()[0]
        found = []
        for path in paths:
            with urllib.request.urlopen(f"{url}{path}", timeout=30) as reply:
                found.append(reply.read().decode())
        return found
    finally:
        web.terminate()
        web.wait(30)
