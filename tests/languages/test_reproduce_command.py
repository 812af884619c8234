"""A failure pack replays against a bot in another language: `python -m client_sdk reproduce
PACK -- COMMAND...` serves the recorded messages over gRPC to the command and reaches the
recorded verdict at the recorded ply (a JavaScript bot's runtime error, a C++ bot's crash)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.submissions.build import build_upload
from tests.languages.toolchains import JS, ROOT

pytestmark = pytest.mark.slow

#: A JavaScript bot that plays seeded random moves, then throws on its fourth request.
THROWER = """'use strict';
const {{ optionsFrom, run, seededRandom }} = require({client});
const {{ Board, toText }} = require({tetress});
const random = seededRandom();
let asked = 0;
run(optionsFrom(process.argv.slice(2), 'js-thrower'), (request) => {{
  asked += 1;
  if (asked === 4) throw new Error('thrown on purpose at the fourth request');
  const moves = Board.parse(request.position).legalMoves();
  return {{ action: toText(moves[Math.floor(random() * moves.length)]) }};
}});
"""

#: A C++ bot that plays seeded random moves, then aborts (SIGABRT) at its fourth request.
CPP_CRASHER = """#include <cstdlib>
#include <random>

#include "tetromino/client.h"
#include "tetromino/tetress.h"

int main(int argc, char** argv) {
  std::mt19937_64 rng(tetromino::seed_from_env());
  int asked = 0;
  auto options = tetromino::options_from(argc, argv, "cpp-crasher");
  return tetromino::run(options, [&](const tetromino::Request& request) {
    if (++asked == 4) std::abort();
    auto moves = tetromino::Board::parse(request.position).legal_moves();
    std::uniform_int_distribution<size_t> pick(0, moves.size() - 1);
    return tetromino::Answer{tetromino::to_text(moves.at(pick(rng))), std::nullopt};
  });
}
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


def test_a_pack_replays_against_a_command_bot(js_bots: Path, tmp_path: Path) -> None:
    """A JS bot's runtime error is packed; reproduce -- node BOT reaches it at the same ply,
    its seeded moves the game's; a command that never connects is one line, status 2."""
    bot = tmp_path / "thrower.js"
    bot.write_text(
        THROWER.format(
            client=json.dumps(str(JS / "src" / "client")),
            tetress=json.dumps(str(JS / "src" / "tetress")),
        )
    )
    record = tmp_path / "game.json"
    # Uncontained: the bot requires the client by its path in this checkout.
    played = _run(
        "-m", "referee.commands.main", "match", f"cmd:node {bot}",
        "client_sdk.examples.random_bot", "--record", str(record), "--json", "--no-sandbox",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout.strip().splitlines()[-1])
    assert result["verdict"] == "runtime_error" and result["offender"] == "RED", result
    pack_path = Path(result["seats"]["RED"]["failure_pack"])
    pack = json.loads(pack_path.read_text())
    out = _run("-m", "client_sdk", "reproduce", str(pack_path), "--json", "--", "node", str(bot))
    assert out.returncode == 0, out.stdout + out.stderr
    replay = json.loads(out.stdout.strip().splitlines()[-1])
    assert replay["match"] is True and replay["reproduced"]["verdict"] == "runtime_error"
    assert replay["reproduced"]["ply"] == pack["fault_ply"]
    assert replay["reproduced"]["reason"] == replay["recorded"]["reason"], replay
    assert (replay["answers"], replay["diverged"]) == (3, None)
    silent = _run("-m", "client_sdk", "reproduce", str(pack_path), "--", "true")
    assert silent.returncode == 2 and "did not connect" in silent.stderr, silent.stderr


def test_match_tells_the_reproduce_command_of_a_command_bot(js_bots: Path, tmp_path: Path) -> None:
    """`referee match` with a command bot that fails prints `reproduce PACK -- COMMAND` (a
    Python bot's `PACK BOT` would not run it)."""
    bot = tmp_path / "thrower.js"
    bot.write_text(
        THROWER.format(
            client=json.dumps(str(JS / "src" / "client")),
            tetress=json.dumps(str(JS / "src" / "tetress")),
        )
    )
    played = _run(
        "-m", "referee.commands.main", "match", f"cmd:node {bot}",
        "client_sdk.examples.random_bot", "--record", str(tmp_path / "game.json"), "--no-sandbox",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    hint = next(ln.strip() for ln in played.stdout.splitlines() if "reproduce:" in ln)
    assert hint.startswith("reproduce: python -m client_sdk reproduce "), hint
    assert hint.endswith(f" -- node {bot}"), hint


def test_a_cpp_bots_crash_replays_against_its_program(cpp_bots: Path, tmp_path: Path) -> None:
    """A C++ bot (built with the server's own upload build) that aborts at its fourth request
    is packed; reproduce -- BOT crashes it here at the same ply, its seeded moves the game's."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.cpp").write_text(CPP_CRASHER)
    out = tmp_path / "out"
    out.mkdir()
    build_upload(source, "cpp", "bot.cpp", out, contained=False)
    bot = str(out / "bot")
    record = tmp_path / "game.json"
    played = _run(
        "-m", "referee.commands.main", "match", f"cmd:{bot}", "client_sdk.examples.random_bot",
        "--record", str(record), "--json", "--no-sandbox",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout.strip().splitlines()[-1])
    assert result["verdict"] == "runtime_error" and result["offender"] == "RED", result
    pack_path = Path(result["seats"]["RED"]["failure_pack"])
    pack = json.loads(pack_path.read_text())
    out_run = _run("-m", "client_sdk", "reproduce", str(pack_path), "--json", "--", bot)
    assert out_run.returncode == 0, out_run.stdout + out_run.stderr
    replay = json.loads(out_run.stdout.strip().splitlines()[-1])
    assert replay["match"] is True and replay["reproduced"]["verdict"] == "runtime_error"
    assert replay["reproduced"]["ply"] == pack["fault_ply"]
    assert (replay["answers"], replay["diverged"]) == (3, None), replay
