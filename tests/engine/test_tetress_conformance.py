"""Replays the reference Tetress games and agrees with them on every ply.

The games are in tests/data/conformance/tetress; TETRESS_CONFORMANCE_DIR points elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from engine.outcome import Termination
from engine.tetress import Placement, Tetress

_REPO = Path(__file__).resolve().parents[2]
_DEFAULT_DIR = _REPO / "tests" / "data" / "conformance" / "tetress"
CONFORMANCE_DIR = Path(os.environ.get("TETRESS_CONFORMANCE_DIR", str(_DEFAULT_DIR)))


def _games() -> list[tuple[str, dict[str, Any]]]:
    games = []
    for path in sorted(CONFORMANCE_DIR.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    games.append((f"{path.name}:{number}", json.loads(line)))
    return games


GAMES = _games()


def test_conformance_games_exist() -> None:
    """The conformance folder holds games (an empty folder must not pass silently)."""
    assert GAMES, f"no *.jsonl games in {CONFORMANCE_DIR}"


def _digest(cells: list[list[int]]) -> str:
    return hashlib.sha256(json.dumps(sorted(cells), separators=(",", ":")).encode()).hexdigest()


@pytest.mark.parametrize(("where", "record"), GAMES, ids=[w for w, _ in GAMES])
def test_replay_agrees_on_every_ply(where: str, record: dict[str, Any]) -> None:
    """Every ply's legal count and digest, the move's legality, the board and the result agree."""
    game = Tetress()
    state = game.new_state()
    for ply, step in enumerate(record["plies"]):
        context = f"{where} ply {ply}"
        assert game.seat_names[state.to_move] == step["mover"], context
        assert state.outcome() is None, context
        legal = state.legal_moves
        assert len(legal) == step["legal_count"], context
        cells = [list(p.cells) for p in legal]
        assert len(cells) == step["legal_count"], context
        assert _digest(cells) == step["legal_sha256"], context
        move = Placement.from_cells(step["move"])
        assert move in legal, context
        state.apply(move)
        assert "/".join(state.grid()) == step["board_after"], context
    outcome = state.outcome()
    assert outcome is not None, where
    assert state.ply == record["turns"]
    assert outcome.termination == Termination(record["reason"])
    winner = "DRAW" if outcome.winner is None else game.seat_names[outcome.winner]
    assert winner == record["winner"], where
