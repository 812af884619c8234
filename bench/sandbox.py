"""Sandbox benchmarks: what containing a launched bot costs, measured side by side in one run.

    python bench/sandbox.py [--json] [--rounds N] [--games N]

Prints a table (or, with ``--json``, one JSON object as the last line) with:

* ``launch_p50_ms_warm`` and ``launch_p50_ms_cold``: the median time from ``launch()`` to the
  bot's session open at the referee (its Hello arrived), sandboxed, served by a warm sandbox
  (:mod:`referee.sandbox.warm`, started and ready before the game) and started cold; launched
  alternately with the others, ``--rounds`` of each.
* ``launch_overhead_ms``: the median start-up of a bot inside the sandbox (``launch()`` called
  to its session open at the referee: bwrap, the namespaces, the per-game copy, the seccomp
  filter, Python and the SDK starting) minus the median start-up of the same bot outside it;
  both reach the referee over a Unix socket, launched alternately, ``--rounds`` of each.
* ``move_cycle_ratio_sandboxed``: the median move cycle (one move observed at the referee to
  the next: request, the bot's answer, validation) of random-vs-random games with both bots
  sandboxed on the per-game Unix socket, divided by the same with both bots outside the
  sandbox on TCP loopback (what ``referee match --no-sandbox`` does); ``--games`` of each,
  alternately. The random bot answers at once, so the cycle is mostly transport and referee.
* ``launch_p50_ms_cold_cpp`` and ``startup_outside_ms_cpp``: the same start-up for the C++
  client's random bot (``clients/cpp/build/random_bot``, a command bot), sandboxed cold and
  outside, and ``launch_cpp_vs_python_cold``, its sandboxed start-up over the Python bot's.
* ``bot_ready_cpu_ms``: the CPU a launched, sandboxed bot spends from its exec to its first
  move (its own cgroup's count, read when the referee receives that move: the bot's Python and
  the sandbox's start-up, everything the referee charges it), the larger of ``_sdk`` (the
  example random bot, an SDK module) and ``_course`` (the course-style random package), each
  the median of ``--rounds`` cold launches; ``_warm`` variants for bots served by a warm
  sandbox (exec happened before the game: its imports ahead of need included).
  ``grpc_import_cpu_ms``: the CPU of ``python -c "import grpc, google.protobuf"`` (the floor
  of any gRPC bot), median of as many runs interleaved with the launches;
  ``bot_ready_ratio``: the first over the second.

The machine is shared (two cores): figures are noisy; compare them within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import finish  # noqa: E402

BOT = "client_sdk.examples.random_bot"
#: The C++ client's example bot (build it first: clients/cpp/README.md).
CPP_BOT = f"cmd:{ROOT}/clients/cpp/build/random_bot"
COURSE_BOT = str(ROOT / "client_sdk" / "examples" / "course_random")


async def _startup_s(isolation: Any, warm: bool = False, bot_spec: str = BOT) -> float:
    """Seconds from ``launch()`` to the bot's session being open at the referee (``warm``:
    served by a warm sandbox that finished its imports before the game started)."""
    from referee.sandbox import warm as pool

    if warm:
        async with pool.demand(1, pool.WarmTerms(), isolation) as found:
            assert found is not None, "warm sandboxes are switched off"
            await found.pool.ready()
            return await _startup_s(isolation)
    from referee.sandbox.launch import launch, parse_bot_spec
    from referee.server.app import RefereeServer
    from referee.server.auth import TokenTable

    folder = tempfile.mkdtemp(prefix="arena-bench-")
    token = secrets.token_hex(16)
    server = RefereeServer(auth=TokenTable({token: "p"}, one_session=True))
    address = await server.start(f"unix:{folder}/referee.sock")
    try:
        start = time.perf_counter()
        bot = await launch(parse_bot_spec(bot_spec), address, token, isolation=isolation)
        try:
            await server.lobby.wait_for(lambda s: True, 60)
            return time.perf_counter() - start
        finally:
            await bot.stop(0.5)
    finally:
        await server.stop(0)
        shutil.rmtree(folder, ignore_errors=True)


class MoveCycles:
    """Observer: the time between consecutive moves of a game."""

    def __init__(self) -> None:
        self.last: float | None = None
        self.cycles: list[float] = []

    def on_move(self, state: Any, move: Any, clocks: Any) -> None:
        now = time.perf_counter()
        if self.last is not None:
            self.cycles.append(now - self.last)
        self.last = now

    def on_end(self, state: Any, report: Any) -> None:
        return None


async def _game_cycles(isolation: Any) -> list[float]:
    from engine.registry import load_game
    from referee.play.local import play_match
    from referee.sandbox.launch import parse_bot_spec

    cycles = MoveCycles()
    specs = [parse_bot_spec(BOT), parse_bot_spec(BOT)]
    result = await play_match(specs, load_game("tetress"), observer=cycles, isolation=isolation)
    assert result.report.labels["sandbox"] == isolation.value
    return cycles.cycles


def _grpc_import_cpu_s() -> float:
    """CPU seconds (user + system) of a fresh ``python -c "import grpc, google.protobuf"``."""
    import os

    pid = os.posix_spawn(
        sys.executable, [sys.executable, "-c", "import grpc, google.protobuf"], dict(os.environ)
    )
    _, status, usage = os.wait4(pid, 0)
    assert status == 0, status
    return usage.ru_utime + usage.ru_stime


class _FirstMoves:
    """Observer: each seat's bot CPU (its cgroup's count) when its first move arrives."""

    def __init__(self, bots: list[Any]) -> None:
        self.bots = bots
        self.ready: list[float] = []

    def on_move(self, state: Any, move: Any, clocks: Any) -> None:
        if len(self.ready) < len(self.bots):
            self.ready.append(self.bots[len(self.ready)].cpu_seconds())

    def on_end(self, state: Any, report: Any) -> None:
        return None


async def _ready_cpu_s(spec_text: str, isolation: Any, warm: bool = False) -> list[float]:
    """Two bots of ``spec_text`` launched (cold, or served by warm sandboxes) and played
    against each other; each one's CPU from its exec to its first move."""
    from referee.sandbox import warm as pool

    if warm:
        async with pool.demand(2, pool.WarmTerms(), isolation, numpy=False) as found:
            assert found is not None, "warm sandboxes are switched off"
            await found.pool.ready()
            return await _ready_cpu_s(spec_text, isolation)
    from engine.registry import load_game
    from referee.match.runner import MatchRunner
    from referee.sandbox.launch import launch, parse_bot_spec
    from referee.server.app import RefereeServer
    from referee.server.auth import TokenTable

    folder = tempfile.mkdtemp(prefix="arena-bench-")
    tokens = {secrets.token_hex(16): p for p in ("a", "b")}
    server = RefereeServer(auth=TokenTable(tokens, one_session=True), games=["tetress"])
    address = await server.start(f"unix:{folder}/referee.sock")
    bots = []
    try:
        for token in tokens:
            bots.append(
                await launch(parse_bot_spec(spec_text), address, token, isolation=isolation)
            )
        sessions = [
            await server.lobby.wait_for(lambda s, p=p: s.identity.player_id == p, 60)
            for p in tokens.values()
        ]
        first = _FirstMoves(bots)
        await MatchRunner(load_game("tetress"), sessions, observer=first).run()
        return first.ready
    finally:
        for bot in bots:
            await bot.stop(0.5)
        await server.stop(0)
        shutil.rmtree(folder, ignore_errors=True)


async def _ready_figures(rounds: int) -> dict[str, Any]:
    """Bot-ready CPU (SDK and course-style bots, cold and warm) against the gRPC import."""
    from referee.sandbox.isolation import Isolation

    kinds = {"sdk": BOT, "course": COURSE_BOT}
    ready: dict[str, list[float]] = {}
    floor: list[float] = []
    for warm in (False, True):  # a warm-up game of each kind first
        await _ready_cpu_s(BOT, Isolation.BWRAP, warm)
    for _ in range(rounds):
        for kind, spec in kinds.items():
            for warm in (False, True):
                found = await _ready_cpu_s(spec, Isolation.BWRAP, warm)
                ready.setdefault(kind + ("_warm" if warm else ""), []).extend(found)
            floor.append(await asyncio.to_thread(_grpc_import_cpu_s))
    grpc_ms = statistics.median(floor) * 1000
    figures: dict[str, Any] = {"grpc_import_cpu_ms": round(grpc_ms, 1)}
    for key, values in ready.items():
        figures[f"bot_ready_cpu_ms_{key}"] = round(statistics.median(values) * 1000, 1)
    cold = max(figures["bot_ready_cpu_ms_sdk"], figures["bot_ready_cpu_ms_course"])
    warm_ms = max(figures["bot_ready_cpu_ms_sdk_warm"], figures["bot_ready_cpu_ms_course_warm"])
    figures["bot_ready_cpu_ms"] = cold
    figures["bot_ready_ratio"] = round(cold / grpc_ms, 3)
    figures["bot_ready_cpu_ms_warm"] = warm_ms
    figures["bot_ready_ratio_warm"] = round(warm_ms / grpc_ms, 3)
    return figures


async def _measure(rounds: int, games: int) -> dict[str, Any]:
    from referee.sandbox.isolation import Isolation, probe

    support = probe()
    if not support.available:
        raise SystemExit(f"bench/sandbox.py: the sandbox cannot run here: {support.reason}")
    starts: dict[Isolation, list[float]] = {Isolation.NONE: [], Isolation.BWRAP: []}
    warm_starts: list[float] = []
    cpp_starts: dict[Isolation, list[float]] = {Isolation.NONE: [], Isolation.BWRAP: []}
    await _startup_s(Isolation.BWRAP)  # warm up: filter compiled, caches filled
    await _startup_s(Isolation.NONE)
    await _startup_s(Isolation.BWRAP, warm=True)
    for _ in range(rounds):
        for isolation in (Isolation.NONE, Isolation.BWRAP):
            starts[isolation].append(await _startup_s(isolation))
        warm_starts.append(await _startup_s(Isolation.BWRAP, warm=True))
        for isolation in (Isolation.NONE, Isolation.BWRAP):
            cpp_starts[isolation].append(await _startup_s(isolation, bot_spec=CPP_BOT))
    cycles: dict[Isolation, list[float]] = {Isolation.NONE: [], Isolation.BWRAP: []}
    for _ in range(games):
        for isolation in (Isolation.NONE, Isolation.BWRAP):
            cycles[isolation].extend(await _game_cycles(isolation))
    inside = statistics.median(starts[Isolation.BWRAP])
    outside = statistics.median(starts[Isolation.NONE])
    cycle_in = statistics.median(cycles[Isolation.BWRAP])
    cycle_out = statistics.median(cycles[Isolation.NONE])
    warm = statistics.median(warm_starts)
    cpp_in = statistics.median(cpp_starts[Isolation.BWRAP])
    cpp_out = statistics.median(cpp_starts[Isolation.NONE])
    return {
        **await _ready_figures(rounds),
        "launch_p50_ms_warm": round(warm * 1000, 1),
        "launch_p50_ms_cold": round(inside * 1000, 1),
        "warm_speedup": round(inside / warm, 2),
        "launch_overhead_ms": round((inside - outside) * 1000, 1),
        "startup_sandboxed_ms": round(inside * 1000, 1),
        "startup_outside_ms": round(outside * 1000, 1),
        "launch_p50_ms_cold_cpp": round(cpp_in * 1000, 1),
        "startup_outside_ms_cpp": round(cpp_out * 1000, 1),
        "launch_cpp_vs_python_cold": round(cpp_in / inside, 3),
        "move_cycle_ratio_sandboxed": round(cycle_in / cycle_out, 3),
        "move_cycle_sandboxed_unix_us": round(cycle_in * 1e6, 1),
        "move_cycle_outside_tcp_us": round(cycle_out * 1e6, 1),
        "rounds": rounds,
        "cycles_measured": min(len(cycles[Isolation.BWRAP]), len(cycles[Isolation.NONE])),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    parser.add_argument("--rounds", type=int, default=9, help="launches of each kind")
    parser.add_argument("--games", type=int, default=3, help="games of each kind")
    args = parser.parse_args()
    from referee.telemetry import logs

    logs.configure("console", "ERROR")
    figures = asyncio.run(_measure(args.rounds, args.games))
    print("sandbox cost (median; launched alternately in one run; the machine is shared)")
    print(
        f"  bot start-up: {figures['startup_sandboxed_ms']:.1f} ms sandboxed, "
        f"{figures['startup_outside_ms']:.1f} ms outside: "
        f"+{figures['launch_overhead_ms']:.1f} ms (target < 50 ms)"
    )
    print(
        f"  sandboxed launch to Hello, p50: {figures['launch_p50_ms_warm']:.1f} ms warm, "
        f"{figures['launch_p50_ms_cold']:.1f} ms cold: x{figures['warm_speedup']:.2f} "
        "(target < 50 ms warm)"
    )
    print(
        f"  C++ random bot, launch to Hello, p50: {figures['launch_p50_ms_cold_cpp']:.1f} ms "
        f"sandboxed, {figures['startup_outside_ms_cpp']:.1f} ms outside: "
        f"x{figures['launch_cpp_vs_python_cold']:.3f} of the Python bot's cold launch"
    )
    print(
        f"  move cycle: {figures['move_cycle_sandboxed_unix_us']:.0f} us sandboxed (unix socket), "
        f"{figures['move_cycle_outside_tcp_us']:.0f} us outside (TCP loopback): "
        f"x{figures['move_cycle_ratio_sandboxed']:.3f}"
    )
    print(
        f"  bot ready (exec to first move, CPU): {figures['bot_ready_cpu_ms']:.1f} ms cold "
        f"(SDK {figures['bot_ready_cpu_ms_sdk']:.1f}, "
        f"course {figures['bot_ready_cpu_ms_course']:.1f}), "
        f"{figures['bot_ready_cpu_ms_warm']:.1f} ms warm; import grpc, google.protobuf: "
        f"{figures['grpc_import_cpu_ms']:.1f} ms: x{figures['bot_ready_ratio']:.2f} cold, "
        f"x{figures['bot_ready_ratio_warm']:.2f} warm (target <= 1.3)"
    )
    return finish(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
