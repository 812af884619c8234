"""Benchmark: uploading bots, from the first byte to an accepted version, and store throughput.

* ``upload_to_active_s``: the median time from starting ``python -m client_sdk submit`` on a
  typical course bot (``client_sdk/examples/course_greedy``, a new version each time) over the
  real gRPC Submissions service to its version being accepted, validation game included (full-length
  Tetress against the reference bot, in the sandbox). Baseline, same run: the validation game
  alone on an already stored version, so the ratio is what upload, vetting, storage and the
  database add.
* ``uploads_per_s``: small packages (a different one-file bot each time) uploaded over gRPC
  and stored, without validation (``no_wait``; token check, vetting, unpacking, hashing,
  the database row). Baseline, same run: the store alone (vetting, unpacking, hashing into a
  fresh store; no gRPC, no database, no token check).

Usage: python bench/submit.py [--runs 5] [--uploads 100] [--json]
With ``--json`` the last line is one JSON object: ``upload_to_active_s``, ``uploads_per_s``,
their baselines and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

# Run as a script, sys.path[0] is bench/, where bench/referee.py would shadow the package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from bench.common import finish  # noqa: E402
from client_sdk._submit import CHUNK  # noqa: E402
from client_sdk.proto import submissions_pb2 as spb  # noqa: E402
from client_sdk.proto import submissions_pb2_grpc  # noqa: E402
from referee.rpc.uploads import SubmissionService  # noqa: E402
from referee.sandbox.launch import BotSpec  # noqa: E402
from referee.server.app import RefereeServer  # noqa: E402
from referee.storage import Repository  # noqa: E402
from referee.submissions.limits import UploadLimits  # noqa: E402
from referee.submissions.service import Submissions  # noqa: E402
from referee.submissions.store import SubmissionStore  # noqa: E402
from referee.submissions.validate import ValidationSettings, play_validation  # noqa: E402

COURSE_BOT = ROOT / "client_sdk" / "examples" / "course_greedy"
SMALL_BOT = "from client_sdk import Agent\n\n\nclass Bot(Agent):\n    n = {n}\n"
#: No quota gets in the way of a benchmark.
LIMITS = UploadLimits(max_submissions_per_window=10**9, max_stored_bytes_per_player=10**12)


def course_zip(n: int) -> bytes:
    """The course bot as ``agent/``, with a comment making it version ``n``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(COURSE_BOT.glob("*.py")):
            text = file.read_text()
            if file.name == "program.py":
                text += f"\n# benchmark run {n}\n"
            archive.writestr(f"agent/{file.name}", text)
    return buffer.getvalue()


def small_zip(n: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bot.py", SMALL_BOT.format(n=n))
    return buffer.getvalue()


async def _upload(address: str, token: str, data: bytes, wait: bool) -> str:
    """One upload as the CLI sends it (start, then 256 KiB chunks), on a fresh channel."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = submissions_pb2_grpc.SubmissionsStub(channel)
        requests = [spb.SubmitRequest(start=spb.SubmitStart(size=len(data), no_wait=not wait))]
        requests += [
            spb.SubmitRequest(chunk=data[i : i + CHUNK]) for i in range(0, len(data), CHUNK)
        ]
        status = ""
        call = stub.Submit(iter(requests), metadata=[("authorization", f"Bearer {token}")])
        async for event in call:
            kind = event.WhichOneof("kind")
            status = event.stored.status if kind == "stored" else event.validated.status
        return status


async def _submit_cli(address: str, token: str, folder: Path) -> str:
    """``python -m client_sdk submit --json`` as a student runs it; the final status."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_sdk",
        "submit",
        f"--server={address}",
        f"--token={token}",
        "--json",
        str(folder),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out, _ = await proc.communicate()
    status: str = json.loads(out.decode().strip().splitlines()[-1])["status"]
    return status


async def measure(runs: int, uploads: int, workdir: Path) -> dict[str, Any]:
    repo = Repository.open(str(workdir / "bench.db"))
    repo.create_player("bench")
    token = repo.issue_token("bench")
    store = SubmissionStore(workdir / "store")
    submissions = Submissions(repo, store, limits=LIMITS, validation=ValidationSettings())
    service = SubmissionService(submissions)
    server = RefereeServer(games=["tetress"], services=[service])
    address = await server.start("127.0.0.1:0")
    try:
        active = await _upload_to_active(address, token, workdir, runs)
        stored = store.ingest(course_zip(runs), LIMITS)
        games = []
        for _ in range(runs):
            start = time.perf_counter()
            verdict = await play_validation(BotSpec("sdk", stored.target), submissions.validation)
            games.append(time.perf_counter() - start)
            assert verdict.accepted, verdict.reason
        # The store's throughput: the same server, its validation switched off.
        service.validate = False
        start = time.perf_counter()
        for n in range(uploads):
            status = await _upload(address, token, small_zip(n), False)
            assert status == "validating", status
        grpc_s = time.perf_counter() - start
        checks = []
        for _ in range(10):
            begin = time.perf_counter()
            assert repo.authenticate(token) is not None
            checks.append(time.perf_counter() - begin)
    finally:
        await server.stop(0.5)
        repo.close()
    bare_s = _store_only_s(workdir / "bare", uploads)
    return {
        "upload_to_active_s": round(statistics.median(active), 3),
        "validation_game_only_s": round(statistics.median(games), 3),
        "active_over_game_only": round(statistics.median(active) / statistics.median(games), 3),
        "uploads_per_s": round(uploads / grpc_s, 1),
        "store_only_per_s": round(uploads / bare_s, 1),
        "uploads_over_store_only": round(bare_s / grpc_s, 3),
        # Every upload's token check (an HMAC: the stored token table's).
        "token_check_s": round(statistics.median(checks), 4),
        "runs": runs,
        "uploads": uploads,
    }


async def _upload_to_active(address: str, token: str, workdir: Path, runs: int) -> list[float]:
    """Seconds of each ``referee submit`` of a course bot, from upload to accepted."""
    active = []
    for n in range(runs):
        folder = workdir / f"course{n}" / "agent"
        folder.mkdir(parents=True)
        with zipfile.ZipFile(io.BytesIO(course_zip(n))) as archive:
            for name in archive.namelist():
                (folder / Path(name).name).write_bytes(archive.read(name))
        start = time.perf_counter()
        status = await _submit_cli(address, token, folder)
        active.append(time.perf_counter() - start)
        assert status == "accepted", status
    return active


def _store_only_s(folder: Path, uploads: int) -> float:
    """Seconds for a bare store (no server) to take ``uploads`` small archives."""
    bare = SubmissionStore(folder)
    start = time.perf_counter()
    for n in range(uploads):
        bare.ingest(small_zip(n + 10**6), LIMITS)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="course-bot uploads (median)")
    parser.add_argument("--uploads", type=int, default=100, help="small packages for throughput")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("json", "WARNING")
    with tempfile.TemporaryDirectory(prefix="bench-submit-") as workdir:
        figures = asyncio.run(measure(args.runs, args.uploads, Path(workdir)))
    print(
        f"upload to accepted (course bot, validation game included): median "
        f"{figures['upload_to_active_s']:.2f} s over {args.runs} runs; the validation game "
        f"alone: {figures['validation_game_only_s']:.2f} s "
        f"(ratio {figures['active_over_game_only']:.2f})"
    )
    print(
        f"uploads stored over gRPC (small packages, no validation): "
        f"{figures['uploads_per_s']:.1f}/s; the store alone: {figures['store_only_per_s']:.1f}/s "
        f"(ratio {figures['uploads_over_store_only']:.2f}); one token check: "
        f"{figures['token_check_s'] * 1000:.0f} ms"
    )
    print("(2 shared cores: figures are noisy)")
    return finish(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
