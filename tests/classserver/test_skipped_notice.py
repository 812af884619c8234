"""A remote tournament entry that is not there for its games is told which games it missed and
why: at once on its owner's bot connected under another name, and on the entry's own bot when
it connects later (here after the tournament ended), each game once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from serving import RANDOM, bot_until, cli, players, serve, stop, wait_text

from referee.play.bots import register_remote
from referee.storage import Repository, TournamentStatus

pytestmark = pytest.mark.slow


def _wait_finished(db: Path, name: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while Repository.open(str(db)).get_tournament(name).status is not TournamentStatus.FINISHED:
        assert time.monotonic() < deadline, f"tournament {name} did not finish"
        time.sleep(0.5)


def _missed(game: int, suffix: str = "") -> str:
    return (
        f"skipped: your tournament 'cup' round 1, board 1, game {game} against bob-bot@1 was not "
        "played with your entry alice-bot@1: it was not connected within the 3 s wait; it "
        f"counts as a loss for alice-bot@1 (disconnect){suffix}"
    )


def test_late_entry_is_told_which_games_it_missed_and_why(tmp_path: Path) -> None:
    """alice's bot joined as 'alicebot' (not her entry's name): both of her entry's games
    forfeit after the stated wait, and that bot is told of each with the name to use; her
    entry's bot, joining after the tournament, is told of each game too."""
    db = tmp_path / "arena.db"
    tokens = players(db, "alice", "bob")
    repo = Repository.open(str(db))
    for player in ("alice", "bob"):  # as `referee bot add NAME --remote --owner PLAYER` does
        register_remote(repo, f"{player}-bot", owner=player)
    with serve(tmp_path, "--db", str(db), "--no-web", "--remote-timeout", "3") as address:
        waiting = "waiting: no opponent"
        bob, _ = bot_until(tmp_path, address, RANDOM, "--token", tokens["bob"],
                           "--name", "bob-bot", until=waiting)  # fmt: skip
        # In a channel of its own, so that it is not paired casually with bob's bot.
        wrong, wrong_out = bot_until(tmp_path, address, RANDOM, "--token", tokens["alice"],
                                     "--name", "alicebot", "--channel", "mine",
                                     until=waiting)  # fmt: skip
        try:
            done = cli("tournament", "create", "cup", "alice-bot", "bob-bot", "--db", str(db),
                       "--param", "turn_limit=20", "--start")  # fmt: skip
            assert done.returncode == 0, done.stderr
            _wait_finished(db, "cup")
            told_wrong = wait_text(wrong_out, "skipped:", wrong, count=2)
            stop(wrong)
            late, late_out = bot_until(tmp_path, address, RANDOM, "--token", tokens["alice"],
                                       "--name", "alice-bot", until="connected to")  # fmt: skip
            told_late = wait_text(late_out, "skipped:", late, count=2)
            stop(late)
        finally:
            stop(bob, wrong)
    hint = "; this bot joined as 'alicebot': the entry's bot joins with --name alice-bot"
    for game in (1, 2):
        assert _missed(game, hint) in told_wrong, told_wrong
        assert _missed(game) + "\n" in told_late, told_late
    assert told_late.count("skipped:") == 2
