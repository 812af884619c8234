"""The greedy bot's move cycle in each language, for bench/referee.py: games of a greedy bot
against itself on a local referee (no sandbox, TCP loopback), the median time from one move
observed at the referee to the next (request, the bot's one-ply search, answer, validation).

The C++ and JavaScript bots are the clients' examples (clients/cpp/build, clients/js; build
them first: clients/*/README.md)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from sandbox import MoveCycles  # bench/sandbox.py: the time between consecutive moves

ROOT = Path(__file__).resolve().parents[1]
GREEDY = {
    "python": "client_sdk.examples.greedy_bot",
    "cpp": f"cmd:{ROOT}/clients/cpp/build/greedy_bot",
    "js": f"cmd:node {ROOT}/clients/js greedy",
}


async def _cycles(spec: str) -> list[float]:
    from engine.registry import load_game
    from referee.play.local import play_match
    from referee.sandbox.isolation import Isolation
    from referee.sandbox.launch import parse_bot_spec

    cycles = MoveCycles()
    specs = [parse_bot_spec(spec), parse_bot_spec(spec)]
    result = await play_match(
        specs, load_game("tetress"), observer=cycles, isolation=Isolation.NONE
    )
    end = result.report.end
    assert end is not None and str(end.verdict) == "normal", (spec, end)
    return cycles.cycles


async def greedy_cycles(games: int) -> dict[str, Any]:
    """Each language's median greedy move cycle in ms, games alternated, and the ratios."""
    found: dict[str, list[float]] = {lang: [] for lang in GREEDY}
    for _ in range(games):
        for lang, spec in GREEDY.items():
            found[lang].extend(await _cycles(spec))
    ms = {lang: statistics.median(c) * 1000 for lang, c in found.items()}
    return {
        "greedy_move_cycle_ms_python": round(ms["python"], 2),
        "greedy_move_cycle_ms_cpp": round(ms["cpp"], 2),
        "greedy_move_cycle_ms_js": round(ms["js"], 2),
        "greedy_cpp_vs_python": round(ms["cpp"] / ms["python"], 3),
        "greedy_js_vs_python": round(ms["js"] / ms["python"], 3),
        "greedy_cycles_measured": min(len(c) for c in found.values()),
    }
