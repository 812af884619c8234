"""``python -m client_sdk play`` and ``new``: local games between bot processes judged by the
server's adjudicator, and starter bots (real subprocesses, real games)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.records import read_records
from engine.records.jsonform import read_json

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
GREEDY = "client_sdk.examples.greedy_bot"


def _sdk(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client_sdk", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or REPO,
        stdin=subprocess.DEVNULL,
    )


def _bot(tmp: Path, name: str, body: str) -> str:
    """A one-file SDK bot whose choose_move runs ``body``."""
    path = tmp / f"{name}.py"
    path.write_text(
        "import os, time\n"
        "from client_sdk import Agent\n"
        f"class Bot(Agent):\n"
        f"    def choose_move(self, state, clocks):\n"
        f"        {body}\n"
        f"        return next(iter(state.legal_moves))\n",
        encoding="utf-8",
    )
    return str(path)


def test_games_alternate_colours_and_records_read_back(tmp_path: Path) -> None:
    """--games 2 seats BOT first then second; --json is one object; the PGN record holds both
    games and reads back; the command says nothing is sandboxed."""
    record = tmp_path / "games.pgn"
    done = _sdk("play", GREEDY, "random", "--games", "2", "--json", "--record", str(record))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    first, second = summary["games"]
    assert first["seats"]["RED"]["bot"] == GREEDY
    assert second["seats"]["BLUE"]["bot"] == GREEDY
    assert summary["sandboxed"] is False
    assert "nothing is sandboxed locally" in done.stderr
    records = read_records(record.read_text(encoding="utf-8"))
    assert [r.players[0] for r in records] == [GREEDY, "client_sdk.examples.random_bot"]
    assert all(r.result in ("1-0", "0-1", "1/2-1/2") for r in records)


def test_a_crashing_bot_is_a_verdict_not_the_end_of_the_command(tmp_path: Path) -> None:
    """A bot whose process dies mid-game loses by runtime error with the crash's sentence;
    the command still reports and exits 0."""
    bot = _bot(tmp_path, "dies", "os._exit(3)")
    done = _sdk("play", bot, "--json")
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout.splitlines()[-1])["games"][0]
    assert game["verdict"] == "runtime_error"
    assert "RED's bot crashed (exit code 3)" in game["reason"]


def test_a_hanging_bot_loses_on_time_and_is_killed(tmp_path: Path) -> None:
    """A bot that never answers loses by time once its move time and grace are spent."""
    bot = _bot(tmp_path, "hangs", "time.sleep(3600)")
    done = _sdk("play", bot, "--move-time", "1", "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout.splitlines()[-1])["games"][0]
    assert game["verdict"] == "time"
    assert "RED exceeded its wall time" in game["reason"] and "for ply 1" in game["reason"]


def test_a_bot_over_its_memory_loses_by_memory(tmp_path: Path) -> None:
    """A bot that holds more resident memory than -s allows loses with the memory sentence."""
    bot = _bot(tmp_path, "eats", "self.hog = bytearray(200 * 2**20); time.sleep(3)")
    done = _sdk("play", bot, "-s", "120", "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout.splitlines()[-1])["games"][0]
    assert game["verdict"] == "memory"
    assert "RED exceeded its memory" in game["reason"] and "of 120 MB" in game["reason"]


def test_verbose_shows_board_and_clocks_and_a_reference_opponent_plays(tmp_path: Path) -> None:
    """-v prints the board and both clocks after each move; level1 names a reference bot."""
    done = _sdk("play", GREEDY, "level1", "-v", "--seed", "3", "--openings", "tetress")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^clocks: RED [\d.]+ s left  BLUE [\d.]+ s left$", done.stdout, re.M)
    # The book's moves come first (off the clocks): the first move shown is after them.
    assert re.search(r"^ply [5-9]: (RED|BLUE) PLACE\(", done.stdout, re.M), done.stdout[:300]
    assert "client_sdk.examples.reference_bot:Level1" in done.stdout


def test_a_bot_that_does_not_load_is_one_line(tmp_path: Path) -> None:
    """A syntax error in BOT ends play with exit 2 and one line naming the file and line."""
    broken = tmp_path / "broken.py"
    broken.write_text("def oops(:\n", encoding="utf-8")
    done = _sdk("play", str(broken))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"syntax error in {broken}:1" in done.stderr


def test_a_record_path_in_a_missing_folder_is_refused_before_playing(tmp_path: Path) -> None:
    """--record into a folder that does not exist is one line, before any game is played."""
    done = _sdk("play", GREEDY, "--record", str(tmp_path / "nope" / "g.pgn"))
    assert done.returncode == 2
    assert "no such folder" in done.stderr and "game 1" not in done.stdout


@pytest.mark.parametrize("course", [False, True])
def test_new_writes_a_starter_that_plays_and_passes_its_own_test(
    tmp_path: Path, course: bool
) -> None:
    """`new NAME` (and --course) writes the bot, a README naming play/submit/mine, and a test
    that passes when run as a script; the bot then plays a local game."""
    done = _sdk("new", "my_bot", *(["--course"] if course else []), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "my_bot"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for command in ("client_sdk play my_bot", "client_sdk submit", "client_sdk mine"):
        assert command in readme
    source = (folder / "my_bot" / ("program.py" if course else "__init__.py")).read_text()
    assert ("def action" in source) if course else ("def choose_move" in source)
    test = subprocess.run(
        [sys.executable, "test_my_bot.py"], cwd=folder, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert test.returncode == 0, test.stderr
    played = _sdk("play", "my_bot", "--json", cwd=folder)
    assert played.returncode == 0, played.stderr
    game = json.loads(played.stdout.splitlines()[-1])["games"][0]
    assert game["verdict"] in ("normal", "turn_limit"), game["reason"]
    again = _sdk("new", "my_bot", cwd=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr


def test_help_lists_every_subcommand_with_one_line() -> None:
    """`python -m client_sdk --help` names play, new, submit and mine, one line each."""
    done = _sdk("--help")
    assert done.returncode == 0
    from client_sdk.__main__ import COMMANDS

    for name, _, _, summary in COMMANDS:
        line = rf"^\s+{re.escape(name)}\s+{re.escape(summary)}$"
        assert re.search(line, done.stdout, re.M), (name, done.stdout)
    assert {name for name, *_ in COMMANDS} >= {"play", "new", "submit", "mine"}


def test_the_game_its_parameters_and_a_shipped_bot_name_work_as_on_the_server() -> None:
    """--game att with --param plays ATT under that parameter; an unknown game or parameter
    is one line before any bot starts; shipped bot names work for BOT too."""
    done = _sdk("play", "greedy", "--game", "att", "--param", "max_placer_turns=20", "--json")
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout.splitlines()[-1])["games"][0]
    assert set(game["seats"]) == {"CHOOSER", "PLACER"}
    assert game["seats"]["CHOOSER"]["bot"] == GREEDY
    for flags, said in (
        (["--game", "nope"], "unknown game 'nope'"),
        (["--param", "x=1"], "--param"),
    ):
        bad = _sdk("play", "greedy", *flags)
        assert bad.returncode == 2 and said in bad.stderr and "Traceback" not in bad.stderr
        assert "nothing is sandboxed" not in bad.stderr  # refused before anything ran


def test_a_record_keeps_the_think_records_and_names_the_wall_clock(tmp_path: Path) -> None:
    """--record keeps each move's think record (the reference bot's depth, nodes, score, PV)
    and names the clock the local judge charged: wall time (no CPU is measured here)."""
    record = tmp_path / "game.json"
    done = _sdk(
        "play", "level1", "random", "--param", "turn_limit=8", "--record", str(record), "--json"
    )
    assert done.returncode == 0, done.stderr
    game = read_json(record.read_text(encoding="utf-8"))
    assert game.time_control is not None and " wall" in game.time_control, game.time_control
    assert "CPU" not in game.time_control
    thought = [m.search for m in game.moves[0::2]]
    assert all(s is not None and s.depth and s.nodes and s.pv for s in thought), thought
    assert all(m.search is None for m in game.moves[1::2])  # the random bot says nothing
