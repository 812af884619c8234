"""The playtest that chose ATT's default N and M reads each capped game correctly."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engine.att import AsymmetricTetrisTactics, Choice
from engine.outcome import Termination

ROOT = Path(__file__).resolve().parents[2]


def _playtest() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "att_playtest", ROOT / "bench" / "att_playtest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["att_playtest"] = module
    spec.loader.exec_module(module)
    return module


PLAYTEST = _playtest()


def test_trace_reads_turn_and_row_limits() -> None:
    """A top-row loss on turn 4 after one row: the chooser wins only if N >= 4 and M > 1."""
    trace = PLAYTEST.Trace((0, 0, 1, 1), Termination.TOP_ROW)
    assert trace.chooser_wins(4, 2) and trace.chooser_wins(9, 9)
    assert not trace.chooser_wins(3, 9) and not trace.chooser_wins(9, 1)
    no_entry = PLAYTEST.Trace((0, 0, 0), Termination.NO_ENTRY)
    assert no_entry.chooser_wins(4, 1) and not no_entry.chooser_wins(3, 1)
    assert not PLAYTEST.Trace((0, 1), Termination.REPETITION).chooser_wins(9, 9)


@pytest.mark.parametrize(("chooser", "placer"), [("random", "greedy"), ("greedy", "greedy2")])
@pytest.mark.parametrize(("n", "m"), [(20, 5), (35, 200), (400, 8)])
def test_one_capped_game_predicts_the_game_under_every_limit(
    chooser: str, placer: str, n: int, m: int
) -> None:
    """Replaying the same seeded bots with N and M set gives the winner the trace predicts."""
    seed = 3
    trace = PLAYTEST.play(chooser, placer, seed, 400)
    rng = random.Random(seed)
    state = AsymmetricTetrisTactics(max_placer_turns=n, max_rows=m).new_state()
    while state.outcome() is None:
        state.apply(Choice(PLAYTEST.CHOOSERS[chooser](state, rng)))
        if state.outcome() is None:
            state.apply(PLAYTEST.PLACERS[placer](state, rng))
    outcome = state.outcome()
    assert outcome is not None
    assert (outcome.winner == 0) == trace.chooser_wins(n, m)
