"""Benchmark: games each honest bot plays in casual pairing, alone and beside idle sessions.

A real ``referee serve --db`` on 127.0.0.1, real ``python -m client_sdk`` random bots (each
its own stored player), and idle sessions (connected, never answering; one process holding
them all, ``tests/classserver/bots/idle_sessions.py``), for ``--seconds`` each:

* baseline: the honest bots alone;
* measured: the same honest bots beside ``--idle`` idle sessions.

Printed: the games each honest bot played in both (every honest bot should play, beside the
idle sessions too), the ratio of the fewest games any honest bot played beside the idle
sessions to the fewest alone, and what the idle sessions gave away: their games, and how many
of their losses were rated (a loss while already on probation is stored voided).

Usage: python bench/casual.py [--seconds 20] [--honest 3] [--idle 21] [--time 3] [--json]
With ``--json`` the last line is one JSON object: ``honest_games_alone``,
``honest_games_beside_idle`` (per bot), ``min_ratio``, ``idle_games``,
``idle_sessions_seated``, ``idle_losses_rated``, ``idle_losses_voided``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from referee.storage import Repository  # noqa: E402

IDLE = ROOT / "tests" / "classserver" / "bots" / "idle_sessions.py"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
#: Games per stored bot: (bot name, games, voided games, losses, voided losses).
COUNTS = """
SELECT b.name, COUNT(*), SUM(g.voided), SUM(s.score = 0), SUM(s.score = 0 AND g.voided)
FROM game_seats s JOIN games g ON g.id = s.game_id
JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id
GROUP BY b.name
"""


def _serve(folder: Path, clock_s: float) -> tuple[subprocess.Popen[bytes], str]:
    address_file = folder / "address"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "serve", "--listen", "127.0.0.1:0",
         "--address-file", str(address_file), "--db", str(folder / "arena.db"), "--no-web",
         "--time", f"{clock_s:g}", "--shutdown-grace", "2"],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=(folder / "serve.log").open("w"),
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (address_file.exists() and address_file.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit((folder / "serve.log").read_text())
        time.sleep(0.1)
    return proc, address_file.read_text().split()[0]


def _honest_bot(address: str, token: str) -> subprocess.Popen[bytes]:
    """An SDK random bot joining the server's casual pool."""
    command = [sys.executable, "-m", "client_sdk", "--server", address, "--token", token]
    return subprocess.Popen(
        [*command, "client_sdk.examples.random_bot"],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def scenario(honest: int, idle: int, seconds: float, clock_s: float) -> dict[str, Any]:
    """One run: per-bot game counts from the server's database."""
    with tempfile.TemporaryDirectory(prefix="bench-casual-") as tmp:
        folder = Path(tmp)
        repo = Repository.open(str(folder / "arena.db"))
        tokens = {}
        # Idle sessions from several players, three each (a token opening many sessions at
        # once is throttled).
        idlers = [f"idler{i}" for i in range(1, (idle + 2) // 3 + 1)]
        for name in [f"honest{i}" for i in range(1, honest + 1)] + idlers:
            repo.create_player(name)
            tokens[name] = repo.issue_token(name)
        repo.close()
        server, address = _serve(folder, clock_s)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            if idle:
                idler = subprocess.Popen(
                    [sys.executable, str(IDLE), "--server", address, "--count", str(idle),
                     *(f"--token={tokens[name]}" for name in idlers)],
                    cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                procs.append(idler)
                assert idler.stdout is not None
                idler.stdout.readline()  # "connected N": every idle session is in the lobby
            procs += [_honest_bot(address, tokens[f"honest{i}"]) for i in range(1, honest + 1)]
            time.sleep(seconds)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
            server.terminate()
            server.wait(60)
        with sqlite3.connect(folder / "arena.db") as db:
            rows = db.execute(COUNTS).fetchall()
    games = {name.partition("/")[0]: n for name, n, *_ in rows}
    idle_rows = [r for r in rows if r[0].startswith("idler")]
    return {
        "honest": [games.get(f"honest{i}", 0) for i in range(1, honest + 1)],
        "idle_games": sum(r[1] for r in idle_rows),
        "idle_sessions_seated": len(idle_rows),
        "idle_losses_rated": sum(r[3] - r[4] for r in idle_rows),
        "idle_losses_voided": sum(r[4] for r in idle_rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--honest", type=int, default=3)
    parser.add_argument("--idle", type=int, default=21)
    parser.add_argument("--time", type=float, default=3.0, help="game clock per bot (s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    alone = scenario(args.honest, 0, args.seconds, args.time)
    beside = scenario(args.honest, args.idle, args.seconds, args.time)
    # No ratio when a bot was starved even alone (the baseline itself is unfair).
    fewest = min(alone["honest"])
    ratio = min(beside["honest"]) / fewest if fewest else None
    print(f"{args.honest} honest bots, {args.seconds:g} s each run, {args.time:g} s clocks")
    print(f"  games per honest bot alone:                {alone['honest']}")
    print(f"  games per honest bot beside {args.idle} idle:     {beside['honest']}")
    shown = "n/a (a bot played no game alone)" if ratio is None else f"{ratio:.2f}"
    print(f"  fewest beside idle / fewest alone:          {shown}")
    print(
        f"  idle sessions: {beside['idle_sessions_seated']} of {args.idle} seated, "
        f"{beside['idle_games']} games, losses rated "
        f"{beside['idle_losses_rated']}, voided {beside['idle_losses_voided']}"
    )
    if args.json:
        result = {
            "honest_games_alone": alone["honest"],
            "honest_games_beside_idle": beside["honest"],
            "min_ratio": None if ratio is None else round(ratio, 3),
            "idle_games": beside["idle_games"],
            "idle_sessions_seated": beside["idle_sessions_seated"],
            "idle_losses_rated": beside["idle_losses_rated"],
            "idle_losses_voided": beside["idle_losses_voided"],
        }
        print(json.dumps(result))


if __name__ == "__main__":
    main()
