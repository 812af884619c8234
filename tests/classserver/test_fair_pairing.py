"""Fair casual pairing on a real ``referee serve --db`` with real SDK bots: three honest bots
all play (none starved by the other two), and beside 21 idle sessions (connected, never
answering) every honest bot plays the others while the idle sessions sit out, cost a short
first-move window each, and feed no one's rating."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from serving import ENV, RANDOM, ROOT, bot_until, client, players, serve

pytestmark = pytest.mark.slow

IDLE = Path(__file__).parent / "bots" / "idle_sessions.py"
HONEST = ("ann", "ben", "cid")
#: Each seat of each stored game: (bot name, opponent's bot name, voided, score).
SEATS = """
SELECT b.name, ob.name, g.voided, s.score
FROM game_seats s JOIN games g ON g.id = s.game_id
JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id
JOIN game_seats os ON os.game_id = s.game_id AND os.seat != s.seat
JOIN bot_versions ov ON ov.id = os.bot_version_id JOIN bots ob ON ob.id = ov.bot_id
"""


def _seats(db: Path) -> list[tuple[str, str, int, float]]:
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute(SEATS).fetchall()


def _honest_games(db: Path) -> dict[str, int]:
    """Games each honest bot played against another honest bot."""
    counts = dict.fromkeys(HONEST, 0)
    for bot, opponent, _, _ in _seats(db):
        owner, other = bot.partition("/")[0], opponent.partition("/")[0]
        if owner in counts and other in counts:
            counts[owner] += 1
    return counts


def _wait_until_all_play(db: Path, games: int) -> dict[str, int]:
    """Wait (generously: the machine may be busy) until every honest bot has played
    ``games`` games against the others; the counts."""
    deadline = time.monotonic() + 240
    while min((counts := _honest_games(db)).values()) < games:
        assert time.monotonic() < deadline, counts
        time.sleep(0.5)
    return counts


@contextmanager
def _honest_bots(address: str, tokens: dict[str, str]) -> Iterator[None]:
    procs = [client(address, RANDOM, "--token", tokens[name]) for name in HONEST]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.communicate()


def test_three_honest_bots_all_play(tmp_path: Path) -> None:
    """Three honest bots in one pool: each plays the other two, none is starved."""
    db = tmp_path / "arena.db"
    tokens = players(db, *HONEST)
    with serve(tmp_path, "--db", str(db)) as address, _honest_bots(address, tokens):
        _wait_until_all_play(db, 4)


def test_idle_sessions_cannot_starve_or_be_farmed(tmp_path: Path) -> None:
    """Beside 21 idle sessions (seven players, three each), every honest bot plays the other
    honest bots; each idle session's games are no-shows or unanswered losses, none rated."""
    db = tmp_path / "arena.db"
    idlers = [f"idler{i}" for i in range(1, 8)]
    tokens = players(db, *HONEST, *idlers)
    with serve(tmp_path, "--db", str(db)) as address:
        idle = subprocess.Popen(
            [sys.executable, str(IDLE), "--server", address, "--count", "21",
             *(f"--token={tokens[name]}" for name in idlers)],
            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert idle.stdout is not None and idle.stdout.readline().startswith("connected")
            with _honest_bots(address, tokens):
                _wait_until_all_play(db, 3)
        finally:
            idle.kill()
            idle.communicate()
    idle_seats = [s for s in _seats(db) if s[0].startswith("idler")]
    assert idle_seats, "no idle session was ever seated"
    assert all(voided for _, _, voided, _ in idle_seats), idle_seats
    # No honest bot gained a rated game from an idle one.
    assert not [s for s in _seats(db) if s[1].startswith("idler") and not s[2]]


def test_a_bot_that_times_out_is_told_it_cools_off(tmp_path: Path) -> None:
    """A real SDK bot too slow for the clock loses on time and its client prints the cooling-off
    notice: why, and for how long."""
    slow = str(ROOT / "tests" / "faults" / "bots" / "slow_bot.py")
    with serve(tmp_path, "--time", "1") as address:
        opponent = client(address, RANDOM)
        try:
            proc, out = bot_until(tmp_path, address, slow, until="cooling off:", SLOW_BOT_DELAY="3")
            proc.kill()
            proc.wait()
        finally:
            opponent.kill()
            opponent.communicate()
    said = out.read_text()
    assert "cooling off: you lost your last casual game by TLE" in said, said
    assert "casual pairing resumes in 30 s" in said, said
