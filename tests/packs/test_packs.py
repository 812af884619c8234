"""Failure packs end to end, as real processes: a real bot faults in a sandboxed
``referee match``, its pack is written beside the record and named in ``--json``, and
``python -m client_sdk reproduce`` replays it against the same bot and reaches the same
verdict at the same ply. A pack holds nothing of the opponent's; bad packs get one line."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from client_sdk.proto import referee_pb2 as pb

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
FAULTY = Path(__file__).parent / "bots" / "faulty.py"
FAULTBOT = REPO / "tests" / "faults" / "bots" / "faultbot.py"


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout
    )


def _match(tmp_path: Path, red: str, blue: str, *extra: str) -> tuple[dict[str, Any], Path]:
    """``referee match RED BLUE --record --json`` in the sandbox: (its JSON, the record)."""
    record = tmp_path / "game.json"
    out = _run(
        "-m", "referee.commands.main", "match", red, blue,
        "--record", str(record), "--json", *extra,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["sandbox"] == "bwrap", "these games must run in the real sandbox"
    return result, record


def _reproduce(pack: Path | str, bot: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run("-m", "client_sdk", "reproduce", str(pack), bot, *extra)


CASES = {
    "Raise": ("runtime_error", ()),
    "Exit": ("runtime_error", ()),
    "Hang": ("time", ("--move-time", "1")),
    "Hog": ("memory", ("--memory", "150")),
    "Illegal": ("illegal_move", ()),
    "NoMove": ("illegal_move", ()),
    "Long": ("protocol_error", ()),
}


@pytest.mark.parametrize("fault", sorted(CASES))
def test_each_fault_is_packed_and_reproduced_the_same_way(tmp_path: Path, fault: str) -> None:
    """A bot that faults (crash, exit, hang, memory, illegal move, not a move, a move text
    over the limit) in a sandboxed
    match gets a pack beside the record; reproduce reaches the same verdict at the same ply."""
    verdict, options = CASES[fault]
    bot = f"{FAULTY}:{fault}"
    result, record = _match(tmp_path, bot, "client_sdk.examples.random_bot", *options)
    assert result["verdict"] == verdict and result["offender"] == "RED", result
    pack_path = Path(result["seats"]["RED"]["failure_pack"])
    assert pack_path.parent == record.parent and pack_path.is_file()
    assert "failure_pack" not in result["seats"]["BLUE"]
    pack = json.loads(pack_path.read_text())
    assert (pack["format"], pack["version"], pack["verdict"]) == (
        "tetromino-failure-pack",
        2,
        verdict,
    )
    assert pack["reason"] == result["reason"] and pack["sandbox"] == "bwrap"
    # Plies counted from 1: the fault took the place of the move after the ones played.
    assert isinstance(pack["seed"], int) and pack["fault_ply"] == result["plies"] + 1
    assert len(pack["bot"]["code_digest"]) == 12
    assert len(pack["moves"]) == 3 and all(m["peak_rss_bytes"] > 0 for m in pack["moves"])
    out = _reproduce(pack_path, bot, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    replay = json.loads(out.stdout.strip().splitlines()[-1])
    assert replay["match"] is True and replay["reproduced"]["verdict"] == verdict
    assert replay["reproduced"]["ply"] == pack["fault_ply"]
    # Seeded the same: the three good moves are the ones played in the game.
    assert (replay["answers"], replay["diverged"]) == (3, None)


def test_the_sentence_the_pack_the_replay_and_the_page_number_a_ply_alike(tmp_path: Path) -> None:
    """A bot out of time at its fourth move (RED: the game's 7th move): the verdict's sentence,
    the pack (its fault and its own moves), reproduce's lines and the game page's "why" box all
    say ply 7, the numbering of docs/records.md."""
    from engine.adjudication.verdicts import Verdict
    from referee.web.story import tell

    bot = f"{FAULTY}:Hang"
    result, _ = _match(tmp_path, bot, "client_sdk.examples.random_bot", "--move-time", "1")
    pack = json.loads(Path(result["seats"]["RED"]["failure_pack"]).read_text())
    assert (result["plies"], pack["fault_ply"]) == (6, 7), (result, pack["fault_ply"])
    assert "for ply 7" in pack["reason"] or "no answer for ply 7" in pack["reason"], pack
    assert [m["ply"] for m in pack["moves"]] == [1, 3, 5]
    out = _reproduce(result["seats"]["RED"]["failure_pack"], bot)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "recorded (time at ply 7)" in out.stdout and "here (time at ply 7)" in out.stdout
    story = tell(
        verdict=Verdict.TIME,
        sentence=pack["reason"],
        winner=1,
        offender=0,
        seat_names=("RED", "BLUE"),
        movers=[0, 1] * 3,
        moves=["m"] * 6,
        analysis=None,
        output=None,
    )
    assert "RED was to play ply 7" in story.points[0].text and story.fault_ply == 6


def test_a_fixed_bot_does_not_match_and_says_so(tmp_path: Path) -> None:
    """The pack replayed against a bot that no longer faults: no match, exit status 1."""
    result, _ = _match(tmp_path, f"{FAULTY}:Illegal", "client_sdk.examples.random_bot")
    out = _reproduce(result["seats"]["RED"]["failure_pack"], f"{FAULTY}:Fine")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no match" in out.stdout and "played an illegal move" in out.stdout


def _sent_messages(pack: dict[str, Any]) -> list[pb.RefereeMessage]:
    return [
        pb.RefereeMessage.FromString(base64.b64decode(m["to_bot"]))
        for m in pack["messages"]
        if "to_bot" in m
    ]


def test_a_pack_holds_nothing_private_of_the_opponent(tmp_path: Path) -> None:
    """The opponent prints a secret on every move; the faulted bot's pack (its output, its
    messages, everything) holds none of it, and only messages addressed to its own seat."""
    result, _ = _match(tmp_path, f"{FAULTY}:Fine", f"{FAULTY}:Raise")
    assert result["offender"] == "BLUE", result
    text = Path(result["seats"]["BLUE"]["failure_pack"]).read_text()
    assert "SECRET-OF-THE-FAULTY-BOT" in text  # its own output is there ...
    assert "PRIVATE-TO-THE-FINE-OPPONENT" not in text  # ... the opponent's is not
    pack = json.loads(text)
    sent = _sent_messages(pack)
    for message in sent:
        if message.HasField("game_start"):
            assert message.game_start.info.seat == 1
        assert b"PRIVATE-TO-THE-FINE-OPPONENT" not in message.SerializeToString()
    answers = [pb.Move.FromString(base64.b64decode(m["from_bot"])) for m in pack["messages"]
               if "from_bot" in m]  # fmt: skip
    assert [a.ply for a in answers] == [1, 3, 5]  # BLUE's own plies only ...
    assert [m["event"] for m in pack["messages"] if "event" in m] == ["bot_error"]  # ... and
    assert {"time_s", "think_time_s", "peak_rss_bytes"} <= set(pack["moves"][0])


@pytest.mark.parametrize(
    ("fault", "verdict"), [("oversized", "protocol_error"), ("drop", "disconnect")]
)
def test_protocol_errors_and_disconnects_get_packs(
    tmp_path: Path, fault: str, verdict: str
) -> None:
    """A raw-protocol bot that sends a 100 KB move or drops its connection gets a pack with
    the messages it was sent and what it did."""
    bot = (
        f"cmd:{sys.executable} {FAULTBOT} --server {{server}} --token {{token}} "
        f"--fault {fault} --at 2"
    )
    result, _ = _match(tmp_path, "client_sdk.examples.random_bot", bot)
    assert result["verdict"] == verdict and result["offender"] == "BLUE", result
    pack = json.loads(Path(result["seats"]["BLUE"]["failure_pack"]).read_text())
    assert pack["verdict"] == verdict and pack["seat_name"] == "BLUE"
    kinds = [m.WhichOneof("kind") for m in _sent_messages(pack)]
    assert kinds[0] == "game_start" and kinds[-1] == "game_over" and "move_request" in kinds


def test_malformed_and_oversized_packs_are_refused_in_one_line(tmp_path: Path) -> None:
    """Not JSON, another format, a field missing, a bad message, a file over the cap: each is
    one line on stderr and exit status 2, never a traceback."""
    cases = {
        "notjson.json": b"{nope",
        "other.json": json.dumps({"format": "something-else", "version": 1}).encode(),
        "newer.json": json.dumps({"format": "tetromino-failure-pack", "version": 99}).encode(),
        "missing.json": json.dumps({"format": "tetromino-failure-pack", "version": 1}).encode(),
        "huge.json": b" " * (4 * 1024 * 1024 + 10),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    cases["absent.json"] = b""
    for name in cases:
        out = _reproduce(tmp_path / name, "client_sdk.examples.random_bot")
        assert out.returncode == 2, (name, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in out.stderr, (name, out.stderr)
        assert lines[0].startswith("python -m client_sdk reproduce: "), lines
