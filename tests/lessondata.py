"""Games for the lessons tests: a random Tetress game with think records (secret words in
each bot's own notes), its text record, and its stored reference evaluation."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from engine.adjudication.verdicts import Verdict
from engine.records import GameRecord, RecordBuilder, SearchInfo, record_to_json, write_record
from engine.registry import load_game
from referee.analysis.gameeval import RECORD_KEY, analyse
from referee.storage import FinishedGame, Repository, SeatResult

#: What each seat's bot wrote in its think records: never in anyone's lessons.
SECRETS = ("redsecretplan", "bluesecretplan")
#: Reference nodes per position in these tests (small: quick, and still marks random moves).
NODES = 60


def random_record(seed: int, players: tuple[str, str] = ("red@v1", "blue@v1")) -> GameRecord:
    """A random Tetress game, each move with a think record holding its seat's secret."""
    game = load_game("tetress")
    rng = random.Random(seed)
    state = game.new_state()
    builder = RecordBuilder(game, players=players)
    while state.outcome() is None:
        move = rng.choice(list(state.legal_moves))
        seat = state.to_move
        search = SearchInfo(2, 100, 1.5, (state.san(move),), SECRETS[seat])
        builder.add(move, think=0.01, clock=60.0 - state.ply, search=search)
        state.apply(move)
    return builder.finish()


def store_game(repo: Repository, versions: tuple[int, int], seed: int, analysed: bool) -> int:
    """A random game between two stored versions, with its analysis when ``analysed``."""
    record = random_record(seed)
    text = write_record(record)
    data: dict[str, Any] = record_to_json(record)
    if analysed:
        data[RECORD_KEY] = analyse(text, NODES)
    now = datetime(2026, 11, 20, tzinfo=UTC)
    winner = {"1-0": 0, "0-1": 1}.get(record.result)
    summary = repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(versions[0]), SeatResult(versions[1])],
            verdict=Verdict.NORMAL,
            winner_seat=winner,
            plies=len(record.moves),
            started_at=now,
            finished_at=now,
            moves=[],
            record_text=text,
            record_json=data,
        )
    )
    return summary.id
