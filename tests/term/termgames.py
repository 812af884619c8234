"""Stored games for the term's tests: a finished two-seat game between two bot versions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count

from engine.adjudication.verdicts import Verdict
from referee.storage import FinishedGame, MemoryMeasure, Repository, SeatResult

_T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
_clock = count()


def store_game(
    repo: Repository,
    first: int,
    second: int,
    winner: int | None,
    *,
    game: str = "tetress",
    tournament_id: int | None = None,
    uid: str | None = None,
) -> None:
    """Record one counted game: ``first`` in seat 0, ``winner`` the winning seat (None: draw)."""
    tick = next(_clock)
    repo.record_game(
        FinishedGame(
            game=game,
            game_params={},
            seats=[
                SeatResult(bot_version_id=v, memory_measure=MemoryMeasure.RSS_POLL)
                for v in (first, second)
            ],
            verdict=Verdict.NORMAL,
            winner_seat=winner,
            offender_seat=None,
            plies=10,
            reason="the rules ended the game",
            termination=None,
            moves=[],
            started_at=_T0 + timedelta(seconds=tick),
            finished_at=_T0 + timedelta(seconds=tick, milliseconds=500),
            tournament_id=tournament_id,
            uid=uid,
        )
    )
