"""``python -m client_sdk lessons`` from local records and ``python -m client_sdk test`` on
real bot processes: one fresh process a position, a line each, a summary and an exit status."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lessondata import NODES, random_record

from client_sdk._lessons_cli import record_limits
from engine.records import write_record
from engine.records.lessons import Lesson, LessonsFile, Limits, read_lessons, write_lessons
from engine.registry import load_game

BOTS = Path(__file__).parent / "bots"
REPO = Path(__file__).resolve().parents[2]


def _sdk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client_sdk", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=600,
        check=False,
    )


def _lessons(kind: str = "gave_room") -> tuple[Lesson, Lesson]:
    """Two lessons on one position after six random moves: the first solved by the notation-
    first move, the second about that very move (its good move is the last one)."""
    game = load_game("tetress")
    state = game.new_state()
    rng = random.Random(8)
    history = []
    for _ in range(6):
        move = rng.choice(sorted(list(state.legal_moves), key=state.san))
        history.append(state.san(move))
        state.apply(move)
    moves = sorted(state.san(m) for m in list(state.legal_moves))
    common: dict[str, Any] = {
        "game": "tetress",
        "position": state.to_string(),
        "seat": state.to_move,
        "params": tuple(sorted(game.params.items())),
        "history": tuple(history),
        "game_id": "g1",
        "ply": 7,
        "bot": "ant",
        "version": "v6",
    }
    solved = Lesson(good=((moves[0], 5.0),), played=moves[-1], kind=kind, **common)
    repeated = Lesson(good=((moves[-1], 5.0),), played=moves[0], kind="lost_room", **common)
    return solved, repeated


def _file(tmp_path: Path, lessons: tuple[Lesson, ...], limits: Limits | None = None) -> Path:
    path = tmp_path / "lessons.jsonl"
    path.write_text(write_lessons(LessonsFile(lessons, "me", limits or Limits())), "utf-8")
    return path


@pytest.mark.slow
def test_test_reports_each_position_a_summary_and_an_exit_status(tmp_path: Path) -> None:
    """A bot that plays the notation-first move (once it has heard the whole history) solves
    the first lesson and repeats the move of the second: 1/2, exit 1; --at-least 1 passes;
    --kind runs that kind's lessons only."""
    path = _file(tmp_path, _lessons())
    bot = str(BOTS / "first.py")
    done = _sdk("test", str(path), bot, "--json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert (summary["solved"], summary["total"], summary["passed"]) == (1, 2, False)
    assert [p["result"] for p in summary["positions"]] == ["solved", "repeated"]
    assert summary["by_kind"] == {
        "gave_room": {"solved": 1, "total": 1},
        "lost_room": {"solved": 0, "total": 1},
    }
    people = _sdk("test", str(path), bot, "--at-least", "1", cwd=tmp_path)
    assert people.returncode == 0, people.stderr
    assert "solved 1/2" in people.stdout and "FAIL" in people.stdout and "passed" in people.stdout
    assert f"{bot} solves 1 of the 2 positions ant@v6 lost" in people.stdout
    only = _sdk("test", str(path), bot, "--kind", "lost_room", "--json", cwd=tmp_path)
    kind = json.loads(only.stdout.strip().splitlines()[-1])
    assert (kind["total"], kind["results"], only.returncode) == (1, {"repeated": 1}, 1)


@pytest.mark.slow
def test_time_and_crashes_are_results_not_the_end_of_the_run(tmp_path: Path) -> None:
    """A bot over the file's time and one that raises: each position gets its result (time,
    crash) from its own fresh process, and the run goes on to the summary."""
    path = _file(tmp_path, _lessons(), Limits(game_time_s=0.5, memory_mb=0))
    slow = _sdk("test", str(path), str(BOTS / "sleepy.py"), "--json", cwd=tmp_path)
    crash = _sdk("test", str(path), str(BOTS / "crashy.py"), "--json", cwd=tmp_path)
    for done, result in ((slow, "time"), (crash, "crash")):
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert done.returncode == 1
        assert [p["result"] for p in summary["positions"]] == [result, result]
    assert "lost my marbles" in json.loads(crash.stdout.splitlines()[-1])["positions"][0]["detail"]


@pytest.mark.slow
def test_a_course_bot_follows_the_history_and_answers_legally(tmp_path: Path) -> None:
    """A course-style bot, which keeps its own board, is told every move of the lesson's
    history: its answer is a legal move in the position (never 'illegal')."""
    path = _file(tmp_path, _lessons()[:1])
    bot = str(REPO / "client_sdk" / "examples" / "course_greedy")
    done = _sdk("test", str(path), bot, "--json", cwd=tmp_path)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["positions"][0]["result"] in ("solved", "missed", "repeated"), done.stderr


@pytest.mark.slow
def test_a_hand_added_position_starts_the_bot_from_the_position(tmp_path: Path) -> None:
    """A position added by hand (no history, no game): an SDK bot is started from it and
    answers a legal move; a course bot, which keeps its own board from the empty one, is
    refused with a sentence asking for the history instead of answering from a wrong board."""
    lesson = _lessons()[0]
    state = load_game("tetress").state_from_string(lesson.position)
    every = tuple((state.san(m), 0.0) for m in list(state.legal_moves))
    own = Lesson(lesson.game, lesson.position, lesson.seat, every, params=lesson.params)
    path = _file(tmp_path, (own,))
    sdk = _sdk("test", str(path), "random", cwd=tmp_path)
    assert sdk.returncode == 0, sdk.stderr
    assert "added position [own]: solved" in sdk.stdout
    course = REPO / "client_sdk" / "examples" / "course_greedy"
    done = _sdk("test", str(path), str(course), "--json", cwd=tmp_path)
    position = json.loads(done.stdout.strip().splitlines()[-1])["positions"][0]
    assert done.returncode == 1 and position["result"] == "crash"
    assert "history" in position["detail"] and "ply 6" in position["detail"]


@pytest.mark.slow
def test_test_refuses_a_broken_file_with_status_2(tmp_path: Path) -> None:
    """A file that is not a lessons file: status 2 and the line that is wrong."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": "tetromino-lessons", "version": 1}\n{"game": "tetress"}\n')
    done = _sdk("test", str(path), str(BOTS / "first.py"), cwd=tmp_path)
    assert done.returncode == 2 and "line 2" in done.stderr


@pytest.mark.slow
def test_lessons_are_made_from_local_records_for_the_named_bot(tmp_path: Path) -> None:
    """``lessons RECORD --bot NAME``: lessons of NAME's seats only, readable and checked, under
    the game's time control and memory limit, each of the version its seat's tag names; a name
    that played no game is refused with status 2."""
    record = random_record(9, players=("mine", "theirs"))
    record = replace(
        record,
        time_control="30s wall move<=2s (grace 0.25s)",  # as play writes it
        extra_tags=(("RedVersion", "v6"), ("BlueVersion", "v2"), ("MemoryLimitMB", "100")),
    )
    (tmp_path / "game.pgn").write_text(write_record(record), "utf-8")
    args = ("lessons", "game.pgn", "--nodes", str(NODES), "-o", "out.jsonl")
    done = _sdk(*args, "--bot", "mine", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    book = read_lessons((tmp_path / "out.jsonl").read_text("utf-8"))
    assert book.lessons and {(x.seat, x.bot, x.version) for x in book.lessons} == {
        (0, "mine", "v6")
    }
    assert book.limits == Limits(game_time_s=30.0, move_time_s=2.0, memory_mb=100.0)
    nobody = _sdk(*args, "--bot", "nobody", cwd=tmp_path)
    assert nobody.returncode == 2 and "nobody" in nobody.stderr


@pytest.mark.parametrize(
    ("control", "memory", "limits"),
    [
        ("180+1 move=2 grace=0.25 clock=cpu", "512", Limits(180.0, 2.0, 512.0)),
        ("- clock=wall", "0", Limits(0.0, 0.0, 0.0)),
        ("unlimited wall (grace 0.25s)", None, Limits(0.0, 0.0)),
        (None, "lots", Limits()),
        (None, None, Limits()),
    ],
)
def test_a_records_time_control_gives_the_lessons_limits(
    control: str | None, memory: str | None, limits: Limits
) -> None:
    """The referee's TimeControl form, no limit and no tag, with or without a MemoryLimitMB
    tag: game and move time and memory as recorded, the file's defaults where the record says
    nothing (or nothing readable)."""
    assert record_limits(control, memory) == limits


@pytest.mark.slow
def test_play_writes_the_bots_lessons_when_asked(tmp_path: Path) -> None:
    """``play BOT OPPONENT --lessons FILE``: BOT's lessons from the games it played, under the
    games' own limits, each naming its local game; it says how many the file holds. The
    records it writes give ``lessons`` the same limits."""
    done = _sdk(
        "play", "random", "greedy", "--games", "2", "-t", "30", "-s", "300",
        "--lessons", "l.jsonl", "--record", "games.pgn", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    book = read_lessons((tmp_path / "l.jsonl").read_text("utf-8"))
    assert book.limits == Limits(game_time_s=30.0, memory_mb=300.0) and book.lessons
    assert f"{len(book.lessons)} lessons written to l.jsonl" in done.stderr
    made = _sdk(
        "lessons", "games.pgn", "--bot", "random", "--nodes", "60", "-o", "r.jsonl", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    assert read_lessons((tmp_path / "r.jsonl").read_text("utf-8")).limits == book.limits
    by_game = {x.game_id: x.seat for x in book.lessons}
    assert set(by_game) <= {"local-1", "local-2"}
    # random sat first in game 1 and second in game 2.
    assert all(seat == (0 if game == "local-1" else 1) for game, seat in by_game.items())
