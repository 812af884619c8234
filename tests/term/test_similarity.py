"""Similarity checks: a renamed and reformatted copy scores high, unrelated bots low, the
shipped examples are common code, fragments point at the copied lines, and behaviour
similarity asks real bots in the sandbox."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
from disguise import RENAMES, disguised_copy

from referee.analysis.behaviour import agreement, answers_of, probe_positions
from referee.analysis.similarity import common_hashes, compare, fingerprint, shipped_roots
from referee.commands.main import main
from referee.match.clock import TimeControl
from referee.play.bots import register_source
from referee.sandbox.isolation import choose
from referee.sandbox.launch import BotSpec
from referee.storage import Repository
from referee.storage.reports import latest_report

BOTS = Path(__file__).resolve().parent / "bots"
EXAMPLES = Path(__file__).resolve().parents[2] / "client_sdk" / "examples"


@pytest.fixture
def students(tmp_path: Path) -> dict[str, Path]:
    """ann's bot, bea's disguised copy of it, and two unrelated bots."""
    return {
        "ann": BOTS / "hugger",
        "bea": disguised_copy(BOTS / "hugger", tmp_path / "bea"),
        "cat": BOTS / "spreader",
        "dan": BOTS / "lineclear",
    }


def test_renamed_reformatted_copy_scores_high_and_unrelated_low(students: dict[str, Path]) -> None:
    """The disguised copy shares (nearly) every fingerprint; unrelated bots share few."""
    common = common_hashes(shipped_roots())
    prints = {n: fingerprint(n, p, common) for n, p in students.items()}
    copy = compare(prints["ann"], prints["bea"])
    assert copy.score >= 0.9
    for other in ("cat", "dan"):
        assert compare(prints["ann"], prints[other]).score < 0.25
        assert compare(prints["bea"], prints[other]).score < 0.25
    frag = copy.fragments[0]
    assert frag.a_file == frag.b_file == "program.py"
    assert "create_piece" in frag.a_text and "create_piece" in frag.b_text


def test_shipped_examples_are_common_code(tmp_path: Path) -> None:
    """Two students who both hand in the shipped greedy example share nothing that counts."""
    common = common_hashes(shipped_roots())
    one = shutil.copytree(EXAMPLES / "course_greedy", tmp_path / "one")
    two = shutil.copytree(EXAMPLES / "course_greedy", tmp_path / "two")
    a, b = fingerprint("one", one, common), fingerprint("two", two, common)
    assert compare(a, b).score == 0.0
    assert compare(fingerprint("one", one), fingerprint("two", two)).score == 1.0


def test_cli_flags_the_copy_and_stores_the_report(
    tmp_path: Path, students: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`referee similarity --no-behaviour`: the copied pair is flagged with fragments side by
    side, the unrelated pairs are not, and the instructor's report is stored."""
    db = str(tmp_path / "arena.db")
    repo = Repository.open(db)
    names = [register_source(repo, str(p), name=f"{n}-bot").bot_name for n, p in students.items()]
    code = main(["similarity", *names, "--no-behaviour", "--db", db])
    out = capsys.readouterr().out
    assert code == 0, out
    report = latest_report(repo.db, "similarity")
    assert report is not None
    flagged = [(p["a"], p["b"]) for p in report.body["flagged"]]
    assert len(flagged) == 1 and "ann-bot" in flagged[0][0] and "bea-bot" in flagged[0][1]
    assert "matching code" in out and "look" in out


@pytest.mark.slow
def test_behaviour_same_moves_for_the_copy_in_the_sandbox(students: dict[str, Path]) -> None:
    """Asked the same positions in the sandbox, the copy plays ann's moves; cat does not."""
    positions = probe_positions("tetress", 3)
    clock = TimeControl(game_time_s=0.0, move_time_s=10.0)
    isolation = choose()

    async def ask_all() -> list[object]:
        return [
            await answers_of(
                name,
                BotSpec("sdk", str(students[name])),
                "tetress",
                positions,
                time_control=clock,
                isolation=isolation,
                concurrency=2,
            )
            for name in ("ann", "bea", "cat")
        ]

    ann, bea, cat = asyncio.run(ask_all())
    assert all(ann.moves) and all(bea.moves)  # type: ignore[attr-defined]
    assert agreement(ann, bea) == (1.0, 3)  # type: ignore[arg-type]
    share, _ = agreement(ann, cat)  # type: ignore[arg-type]
    assert share is not None and share < 1.0


@pytest.mark.slow
def test_the_asked_moves_keep_the_course_limits(
    tmp_path: Path, students: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``similarity -t S -s MB`` (the course's spellings) bound the bots it asks: with room
    they answer alike; held to 1 MB no bot answers, so no behaviour share is claimed."""
    db = str(tmp_path / "arena.db")
    repo = Repository.open(db)
    names = [
        register_source(repo, str(students[n]), name=f"{n}-bot").bot_name for n in ("ann", "bea")
    ]
    shares = []
    for memory in ("250", "1"):
        argv = ["similarity", *names, "--positions", "1", "-t", "60", "-s", memory, "--json"]
        assert main([*argv, "--db", db]) == 0
        report = json.loads(capsys.readouterr().out)
        shares.append(report["pairs"][0]["behaviour"])
    assert shares == [1.0, None]


def _renamed_copy(original: Path, target: Path) -> Path:
    """``original`` under another folder name with its identifiers renamed (a student's
    copy of a shipped example: same code, other names)."""
    shutil.copytree(original, target, ignore=shutil.ignore_patterns("__pycache__"))
    program = target / "program.py"
    text = program.read_text()
    for old, new in RENAMES.items():
        text = re.sub(rf"\b{old}\b", new, text)
    program.write_text(text)
    return target


def test_two_renamed_copies_of_a_shipped_example_are_flagged(
    tmp_path: Path, students: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Two students who each hand in the shipped greedy example renamed and reformatted score
    0% once the example is common code, yet the pair is flagged as both copying shipped code,
    with the matching lines; the students with code of their own are not flagged with them."""
    db = str(tmp_path / "arena.db")
    repo = Repository.open(db)
    eve, fay = (_renamed_copy(EXAMPLES / "course_greedy", tmp_path / n) for n in ("eve", "fay"))
    bots = {"eve": eve, "fay": fay, "cat": students["cat"], "dan": students["dan"]}
    names = [register_source(repo, str(p), name=f"{n}-bot").bot_name for n, p in bots.items()]
    assert main(["similarity", *names, "--no-behaviour", "--db", db]) == 0
    out = capsys.readouterr().out
    report = latest_report(repo.db, "similarity")
    assert report is not None
    [flagged] = report.body["flagged"]
    assert "eve-bot" in flagged["a"] and "fay-bot" in flagged["b"]
    assert flagged["code"] == 0.0 and flagged["shipped_copies"] >= 0.9
    assert flagged["fragments"] and "both copy shipped code" in out
    others = [p for p in report.body["pairs"] if p is not flagged and p != flagged]
    assert all(p["shipped_copies"] is None for p in others), others
