"""/metrics after real play: a real referee (local_referee) plays a game between two launched
bots in the sandbox, a real SDK bot with a bad token is turned away, and a scrape of /metrics
over HTTP shows each of them counted."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.registry import load_game
from referee.match.clock import SeatClock
from referee.match.report import GameReport, MoveLog
from referee.play.local import local_referee
from referee.sandbox.launch import BotSpec
from referee.telemetry.endpoints import serve_metrics
from referee.telemetry.metrics import REGISTRY

REPO = Path(__file__).resolve().parents[2]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _samples(text: str) -> Samples:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _delta(after: Samples, before: Samples, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


class _InFlight:
    """Reads the in-flight gauge while the game runs (an observer is called mid-game)."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    def on_move(self, state: Any, move: MoveLog, clocks: Sequence[SeatClock]) -> None:
        value = REGISTRY.get_sample_value("tetromino_games_in_flight", {"game": "tetress"})
        self.seen.append(value or 0.0)

    def on_end(self, state: Any, report: GameReport) -> None:
        pass


async def _bad_token_bot(address: str) -> tuple[int, str]:
    """A real SDK bot process with a token the referee never issued; its exit and output."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_sdk",
        "--server",
        address,
        "--token",
        "not-a-token-anyone-issued",
        "client_sdk.examples.random_bot",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        async with asyncio.timeout(60):
            out, _ = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    return proc.returncode or 0, out.decode(errors="replace")


async def _scenario() -> tuple[Samples, Samples, GameReport, _InFlight, tuple[int, str], str]:
    metrics = await serve_metrics("127.0.0.1:0")
    url = f"{metrics.url}/metrics"
    observer = _InFlight()
    try:
        async with httpx.AsyncClient() as client:
            before = _samples((await client.get(url)).text)
            async with local_referee() as ref:
                specs = [
                    BotSpec("sdk", "client_sdk.examples.random_bot"),
                    BotSpec("sdk", "client_sdk.examples.greedy_bot"),
                ]
                result = await ref.play(load_game("tetress"), specs, observer=observer)
                refused = await _bad_token_bot(ref.address)
                isolation = ref.isolation.value
            after = _samples((await client.get(url)).text)
    finally:
        await metrics.stop()
    return before, after, result.report, observer, refused, isolation


@pytest.mark.slow
def test_metrics_count_a_real_game_and_a_refused_bot() -> None:
    """After one launched game and one bad-token bot, /metrics shows the game's moves, its
    verdict, one move-overhead observation per move after the first (in buckets), two
    sandbox launches, the game in flight while it ran and not after, and one refusal for
    the token."""
    before, after, report, observer, (code, output), isolation = asyncio.run(_scenario())
    end = report.end
    assert end is not None and end.verdict == "normal", report
    moves = sum(1 for m in report.moves if not m.book)
    assert moves > 2
    game = {"game": "tetress"}
    assert _delta(after, before, "tetromino_moves_total", **game) == moves
    verdict = {"game": "tetress", "verdict": "normal"}
    assert _delta(after, before, "tetromino_games_finished_total", **verdict) == 1
    overhead = "tetromino_move_overhead_seconds"
    assert _delta(after, before, f"{overhead}_count", **game) == moves - 1
    every = _delta(after, before, f"{overhead}_bucket", game="tetress", le="+Inf")
    assert every == moves - 1
    # Buckets are cumulative: a 1 s bucket holds at least what a 1 ms one does.
    small = _delta(after, before, f"{overhead}_bucket", game="tetress", le="0.001")
    assert 0 <= small <= _delta(after, before, f"{overhead}_bucket", game="tetress", le="1.0")
    launches = "tetromino_sandbox_launch_seconds_count"
    assert _delta(after, before, launches, isolation=isolation) == 2
    assert _delta(after, before, "tetromino_sandbox_launch_seconds_sum", isolation=isolation) > 0
    assert observer.seen and min(observer.seen) >= 1
    assert _delta(after, before, "tetromino_games_in_flight", **game) == 0
    assert code != 0 and "token" in output.lower(), output
    refused = "tetromino_handshakes_refused_total"
    assert _delta(after, before, refused, reason="unauthenticated") == 1
    assert _delta(after, before, "tetromino_handshakes_admitted_total", kind="new") == 2
    assert _delta(after, before, "tetromino_sessions_connected") == 0
