"""The game page of a 150-ply Tetress game with think records, for ``bench/web.py``.

Two stored games of the same 150 moves: one with a think record on every move (depth, nodes,
score, a 6-move PV, a note) and a stored reference evaluation (so every chart panel, the PV
ghosts and the summary are drawn), one with neither (the baseline). The page is timed in its
handler (server time: the view, chart, board and template; no network), on a first view (the
game's caches empty) and warm, and the ply fragment htmx fetches per step.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from typing import Any

from engine.adjudication.verdicts import Verdict
from engine.records import RecordBuilder, SearchInfo, record_to_json, write_record
from engine.registry import load_game
from referee.storage import FinishedGame, Repository, SeatResult

PLIES = 150


def long_game(seed: int) -> list[Any]:
    """150 Tetress moves: each side keeps both sides' room to move (random play ends early)."""
    game = load_game("tetress")
    rng = random.Random(seed)
    state = game.new_state()
    while state.outcome() is None:
        moves = list(state.legal_moves)
        best: tuple[int, Any] | None = None
        for move in rng.sample(moves, min(12, len(moves))):
            state.apply(move)
            value = state.mobility(0) + state.mobility(1)  # type: ignore[attr-defined]
            state.undo()
            if best is None or value > best[0]:
                best = (value, move)
        assert best is not None
        state.apply(best[1])
    assert len(state.history) == PLIES  # the page figures are for a game of this length
    return list(state.history)


def _thought(
    state: Any, move: Any, rng: random.Random, ply: int, evals: list[dict[str, Any]]
) -> SearchInfo:
    """A made-up think record for ``move`` (a PV of random replies) and its reference mark,
    appended to ``evals``."""
    line, ahead = [state.san(move)], state.copy()
    ahead.apply(move)
    while len(line) < 6 and not ahead.is_over():
        reply = rng.choice(list(ahead.legal_moves))
        line.append(ahead.san(reply))
        ahead.apply(reply)
    score = rng.uniform(-80, 80)
    glyph = rng.choice([None] * 8 + ["?!", "?", "??"])
    evals.append(
        {"ply": ply, "played": score, "best": score + 20, "best_move": line[0], "glyph": glyph}
    )
    return SearchInfo(rng.randint(2, 9), rng.randint(10**3, 10**6), score, tuple(line), "ok")


def store(repo: Repository, versions: list[int], history: list[Any], think: bool) -> int:
    """Store the finished game ``history`` as the referee stores games (with made-up think
    records and reference marks when ``think``); its id."""
    game = load_game("tetress")
    rng = random.Random(7)
    state = game.new_state()
    builder = RecordBuilder(game, players=("a", "b"))
    moves, evals = [], []
    for ply, move in enumerate(history, start=1):
        search = _thought(state, move, rng, ply, evals) if think else None
        builder.add(move, think=0.05, clock=100.0 - ply / 2, mem=40.0, search=search)
        moves.append(
            {
                "ply": ply - 1,
                "seat": state.to_move,
                "move": game.move_to_text(move),
                "measured_s": 0.05,
                "memory_bytes": 40 << 20,
            }
        )
        state.apply(move)
    record = builder.finish()
    data = record_to_json(record)
    if think:
        data["analysis"] = {"engine": "reference", "nodes": 500, "moves": evals}
    outcome = state.outcome()
    assert outcome is not None
    now = datetime.now(UTC)
    summary = repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(versions[0]), SeatResult(versions[1])],
            verdict=Verdict.NORMAL,
            winner_seat=outcome.winner,
            plies=len(moves),
            started_at=now,
            finished_at=now,
            moves=moves,
            record_text=write_record(record),
            record_json=data,
        )
    )
    return summary.id


def handler_ms(app: Any, game_id: int, ply: int | None = None, fragment: bool = False) -> float:
    """Milliseconds for the game page (or the ply fragment) in its handler."""
    from starlette.requests import Request

    from referee.web import pages

    path = f"/games/{game_id}/ply/{ply}" if fragment else f"/games/{game_id}"
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"" if fragment or ply is None else f"ply={ply}".encode(),
        "headers": [],
        "app": app,
        "path_params": {"game_id": game_id, "ply": ply} if fragment else {"game_id": game_id},
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
    }
    t = time.perf_counter()
    response = (pages.game_ply if fragment else pages.game_page)(Request(scope))
    elapsed = (time.perf_counter() - t) * 1000
    assert response.status_code == 200, response.status_code
    return elapsed


def cold_ms(app: Any, game_id: int) -> float:
    """The first view: the game's view, facts and chart not yet cached."""
    web = app.state.web
    web.views = type(web.views)()
    web.fragments = type(web.fragments)(32)
    return handler_ms(app, game_id)
