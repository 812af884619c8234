"""A real referee with the Submissions service on 127.0.0.1 port 0, and real clients for it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from client_sdk.proto import submissions_pb2 as spb
from client_sdk.proto import submissions_pb2_grpc
from referee.match.clock import TimeControl
from referee.rpc.arena import ArenaService
from referee.rpc.uploads import SubmissionService
from referee.server.app import RefereeServer
from referee.storage import Repository
from referee.submissions.limits import UploadLimits
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings

REPO = Path(__file__).resolve().parents[2]
#: A short validation game keeps the suite quick; the limits are the normal ones.
VALIDATION = ValidationSettings(
    game="tetress", game_params={"turn_limit": 16}, time_control=TimeControl(game_time_s=60)
)


@dataclass
class UploadServer:
    address: str
    repo: Repository
    store: SubmissionStore
    db_path: Path
    service: SubmissionService
    tokens: dict[str, str] = field(default_factory=dict)

    def add_player(self, name: str) -> str:
        self.repo.create_player(name)
        self.tokens[name] = self.repo.issue_token(name)
        return self.tokens[name]


@asynccontextmanager
async def upload_server(
    tmp_path: Path,
    limits: UploadLimits | None = None,
    players: tuple[str, ...] = ("alice",),
    upload_timeout_s: float = 120.0,
) -> AsyncIterator[UploadServer]:
    db_path = tmp_path / "arena.db"
    repo = Repository.open(str(db_path))
    store = SubmissionStore(tmp_path / "store")
    submissions = Submissions(repo, store, limits=limits or UploadLimits(), validation=VALIDATION)
    service = SubmissionService(submissions, upload_timeout_s=upload_timeout_s)
    arena = ArenaService(repo)
    server = RefereeServer(games=["tetress"], services=[service, arena])
    address = await server.start("127.0.0.1:0")
    up = UploadServer(address, repo, store, db_path, service)
    for name in players:
        up.add_player(name)
    try:
        yield up
    finally:
        await service.drain()
        await service.close()
        await server.stop(0.5)
        repo.close()


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


async def cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """Run ``python -m client_sdk ARGS`` as a real subprocess: (code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_sdk",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env(),
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def submit_cli(up: UploadServer, player: str, *args: str) -> dict[str, Any]:
    """``python -m client_sdk submit --json``: its last line, as a dict."""
    code, out, err = await cli(
        "submit", "--server", up.address, "--token", up.tokens[player], "--json", *args
    )
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["exit_code"] = code
    result["stderr"] = err
    return result


def _chunks(data: bytes, name: str = "") -> Iterator[spb.SubmitRequest]:
    yield spb.SubmitRequest(start=spb.SubmitStart(bot_name=name, size=0))
    for offset in range(0, len(data), 64 * 1024):
        yield spb.SubmitRequest(chunk=data[offset : offset + 64 * 1024])


async def submit_raw(
    up: UploadServer, token: str, data: bytes, name: str = ""
) -> tuple[list[spb.SubmitEvent], grpc.RpcError | None]:
    """Upload raw archive bytes over gRPC (no client-side packing): events and the error.

    Sent with gRPC's blocking client on a thread, as the SDK's ``submit`` sends: the asyncio
    client may report a server's early refusal as its own INTERNAL "execute_batch" error when
    a chunk is still being written (grpc/grpc#36066), which no student's client would see."""
    requests = list(_chunks(data, name))

    def send() -> tuple[list[spb.SubmitEvent], grpc.RpcError | None]:
        events: list[spb.SubmitEvent] = []
        with grpc.insecure_channel(up.address) as channel:
            stub = submissions_pb2_grpc.SubmissionsStub(channel)
            call = stub.Submit(iter(requests), metadata=[("authorization", f"Bearer {token}")])
            try:
                events.extend(call)
            except grpc.RpcError as exc:
                return events, exc
        return events, None

    return await asyncio.to_thread(send)


async def mine(up: UploadServer, token: str) -> spb.ListMineResponse:
    async with grpc.aio.insecure_channel(up.address) as channel:
        stub = submissions_pb2_grpc.SubmissionsStub(channel)
        reply: spb.ListMineResponse = await stub.ListMine(
            spb.ListMineRequest(), metadata=[("authorization", f"Bearer {token}")]
        )
        return reply


async def my_output(up: UploadServer, token: str, game_id: str) -> spb.MyOutput:
    async with grpc.aio.insecure_channel(up.address) as channel:
        stub = submissions_pb2_grpc.SubmissionsStub(channel)
        reply: spb.MyOutput = await stub.GetMyOutput(
            spb.GetMyOutputRequest(game_id=game_id),
            metadata=[("authorization", f"Bearer {token}")],
        )
        return reply


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
