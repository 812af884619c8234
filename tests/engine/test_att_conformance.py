"""ATT against the independent reference games in tests/data/conformance/att (every turn).

ATT_CONFORMANCE_DIR points the test at another folder of *.jsonl games.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from engine.att import AsymmetricTetrisTactics, Choice, Drop

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE_DIR = Path(
    os.environ.get("ATT_CONFORMANCE_DIR", str(ROOT / "tests" / "data" / "conformance" / "att"))
)
FILES = sorted(CONFORMANCE_DIR.glob("*.jsonl"))


def _games() -> list[tuple[str, dict[str, Any]]]:
    games = []
    for path in FILES:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    games.append((f"{path.name}:{number}", json.loads(line)))
    return games


GAMES = _games()


def test_conformance_games_are_present() -> None:
    """The reference set is found (a missing directory must fail, not pass vacuously)."""
    assert FILES, f"no *.jsonl in {CONFORMANCE_DIR}"
    assert len(GAMES) >= 1


@pytest.mark.parametrize(("where", "record"), GAMES, ids=[w for w, _ in GAMES])
def test_replays_every_turn(where: str, record: dict[str, Any]) -> None:
    """Resting sets (count and hash), removals, the well after each turn, and the ending agree."""
    # The files exercise no turn or row limit (0 switches them off); see their README.
    game = AsymmetricTetrisTactics(max_placer_turns=0, max_rows=0)
    state = game.new_state()
    for number, turn in enumerate(record["turns"], 1):
        at = f"{where} turn {number}"
        state.apply(Choice(turn["piece"]))
        rests = sorted(list(state.cells(m)) for m in state.legal_moves if isinstance(m, Drop))
        digest = hashlib.sha256(json.dumps(rests, separators=(",", ":")).encode()).hexdigest()
        assert len(rests) == turn["rest_count"], at
        assert digest == turn["rest_sha256"], at
        if "move" not in turn:
            assert number == len(record["turns"]), at
            break
        move = game.drop_at(turn["piece"], turn["move"])
        assert list(state.cells(move)) == sorted(turn["move"]), at
        before = state.rows_cleared
        state.apply(move)
        assert state.rows_cleared - before == turn["cleared"], at
        assert "/".join(state.grid()) == turn["board_after"], at
    outcome = state.outcome()
    if record["reason"] == "cap_400":
        assert outcome is None and state.placer_turns == 400
        return
    assert outcome is not None, where
    assert outcome.termination.value == record["reason"], where
    assert outcome.winner is not None
    assert game.seat_names[outcome.winner].lower() == record["winner"], where
    assert state.rows_cleared == record["rows_cleared"], where
