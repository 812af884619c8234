"""The ratings benchmark script runs and its JSON line carries the figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ratings.py"


def test_bench_json_line_has_the_figures_and_the_fits_agree() -> None:
    """A small run prints one JSON object last, with both timings, and the baselines land
    on the fit's ratings."""
    out = subprocess.run(
        [sys.executable, str(BENCH), "--bots", "20", "--games", "600", "--repeat", "1", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"mle_fit_s", "mle_fit_baseline_s", "ratio", "bots", "games"} <= figures.keys()
    assert figures["bots"] == 20 and figures["games"] == 600
    assert figures["mle_fit_s"] > 0 and figures["mle_fit_baseline_s"] > 0
    assert figures["max_abs_diff_elo"] < 0.01
