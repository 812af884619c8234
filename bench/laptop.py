"""A student's laptop: how big the served SDK is and how long it takes from ``pip install``
to the first local game.

    .venv/bin/python bench/laptop.py [--json]

Starts a real ``referee serve`` with its web front on 127.0.0.1 (an empty SDK cache, so the
first ``/sdk`` request builds the wheel), makes a fresh virtualenv, installs the SDK from the
server's ``/sdk`` URL with pip (its dependencies from this machine's pip configuration, as a
student's pip would fetch them), writes a starter bot and plays one local game. The baseline,
timed in the same run, is the same game played from this checkout's own environment (nothing
to install): the ratio says what a fresh laptop pays on top.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import finish  # noqa: E402


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def _timed(argv: list[str], cwd: Path) -> float:
    began = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env=env, timeout=1800)
    return time.perf_counter() - began


def _serve(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    log = tmp / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TETROMINO_SDK_CACHE": str(tmp / "cache")}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "referee.commands.main", "serve", "--listen", "127.0.0.1:0",
             "--web", "127.0.0.1:0"],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=env, text=True,
        )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (found := re.search(r"web_listening.*url=(http://\S+)", log.read_text())):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"referee serve did not start:\n{log.read_text()}")
        time.sleep(0.1)
    return proc, found.group(1)


def measure(tmp: Path) -> dict[str, float]:
    proc, web = _serve(tmp)
    try:
        began = time.perf_counter()
        facts = httpx.get(f"{web}/api/sdk", timeout=600).json()
        build_s = time.perf_counter() - began
        began = time.perf_counter()
        httpx.get(f"{web}/api/sdk", timeout=60).raise_for_status()
        cached_s = time.perf_counter() - began
        venv = tmp / "venv"
        venv_s = _timed([sys.executable, "-m", "venv", str(venv)], tmp)
        python = str(venv / "bin" / "python")
        pip_s = _timed([python, "-m", "pip", "install", "--quiet", facts["url"]], tmp)
    finally:
        proc.terminate()
        proc.wait(30)
    first_s = _timed([python, "-m", "client_sdk", "new", "my_bot"], tmp)
    first_s += _timed([python, "-m", "client_sdk", "play", "my_bot"], tmp / "my_bot")
    baseline_s = _timed(
        [sys.executable, "-m", "client_sdk", "play", str(tmp / "my_bot" / "my_bot")], REPO
    )
    return {
        "wheel_bytes": facts["size"],
        "venv_bytes": _du(venv),
        "wheel_build_s": round(build_s, 2),
        "wheel_cached_s": round(cached_s, 3),
        "venv_create_s": round(venv_s, 2),
        "pip_install_s": round(pip_s, 2),
        "install_to_first_game_s": round(pip_s + first_s, 2),
        "baseline_game_s": round(baseline_s, 2),
        "ratio": round((pip_s + first_s) / baseline_s, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-laptop-") as tmp:
        figures = measure(Path(tmp))
    f = figures
    kib, mb = f["wheel_bytes"] / 1024, f["venv_bytes"] / 2**20
    print(f"wheel: {kib:.0f} KiB (built in {f['wheel_build_s']} s, then {f['wheel_cached_s']} s)")
    print(f"venv: {mb:.0f} MB (created in {f['venv_create_s']} s)")
    print(f"pip install from /sdk: {f['pip_install_s']} s")
    print(f"pip install to the first local game: {f['install_to_first_game_s']} s")
    print(f"baseline, the same game with nothing to install: {f['baseline_game_s']} s")
    print(f"ratio: {f['ratio']}")
    return finish(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
