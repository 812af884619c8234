"""GetMyLessons on a real referee (127.0.0.1 port 0): a student reads their own bots' lessons
and nothing of another's, the instructor reads everyone's, a wrong token nothing; games not
yet analysed are counted and analysed in the background."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from lessondata import NODES, SECRETS, store_game

from client_sdk.proto import submissions_pb2 as spb
from client_sdk.proto import submissions_pb2_grpc
from engine.adjudication import TimeControl
from engine.records.lessons import Limits, read_lessons
from referee.analysis.gameeval import Analyst, store_analysis
from referee.rpc.uploads import SubmissionService
from referee.server.app import RefereeServer
from referee.storage import Repository, SourceKind
from referee.storage.enums import Role
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings


@dataclass
class Class:
    address: str
    repo: Repository
    analyst: Analyst
    tokens: dict[str, str]
    games: list[int]


@asynccontextmanager
async def _class(tmp_path: Path, analysis: str) -> AsyncIterator[Class]:
    """alice's ``ant`` and bob's ``bee`` played three games (two analysed), carol teaches."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    tokens = {}
    for name in ("alice", "bob", "carol"):
        repo.create_player(name)
    tokens["alice"] = repo.issue_token("alice")
    tokens["bob"] = repo.issue_token("bob")
    tokens["carol"] = repo.issue_token("carol", role=Role.INSTRUCTOR)
    ant = repo.add_bot_version(
        "ant", "v1", source_kind=SourceKind.REMOTE, location="", owner="alice"
    )
    bee = repo.add_bot_version("bee", "v1", source_kind=SourceKind.REMOTE, location="", owner="bob")
    games = [store_game(repo, (ant.id, bee.id), seed, analysed=seed != 3) for seed in (1, 2, 3)]
    analyst = Analyst(store=lambda i, d: store_analysis(repo, i, d), nodes=NODES, mode=analysis)
    validation = ValidationSettings(time_control=TimeControl(game_time_s=60.0), memory_mb=120.0)
    submissions = Submissions(repo, SubmissionStore(tmp_path / "store"), validation=validation)
    service = SubmissionService(submissions, analyst=analyst)
    server = RefereeServer(games=["tetress"], services=[service])
    address = await server.start("127.0.0.1:0")
    try:
        yield Class(address, repo, analyst, tokens, games)
    finally:
        await server.stop(0.5)
        repo.close()


def _run(tmp_path: Path, check: Callable[[Class], Awaitable[None]], analysis: str = "off") -> None:
    """``check`` against a fresh class; ``analysis``: whether games are analysed on demand
    (``thread``) or only their stored analyses read (``off``, no thread left running)."""

    async def main() -> None:
        async with _class(tmp_path, analysis) as klass:
            await check(klass)

    asyncio.run(main())


async def _lessons(k: Class, token: str, **fields: str) -> spb.MyLessons:
    async with grpc.aio.insecure_channel(k.address) as channel:
        stub = submissions_pb2_grpc.SubmissionsStub(channel)
        request = spb.GetMyLessonsRequest(**fields)
        reply: spb.MyLessons = await stub.GetMyLessons(
            request, metadata=(("authorization", f"Bearer {token}"),)
        )
        return reply


@pytest.mark.slow
def test_a_student_reads_only_their_own_bots_lessons(tmp_path: Path) -> None:
    """alice's reply holds lessons of ant only (from the two analysed games, the third pending),
    bob's of bee only, under the server's game limits, and neither holds a word of either bot's
    think records."""

    async def check(klass: Class) -> None:
        for player, bot in (("alice", "ant"), ("bob", "bee")):
            reply = await _lessons(klass, klass.tokens[player])
            book = read_lessons(reply.lessons)
            assert book.lessons and {x.bot for x in book.lessons} == {bot}
            assert (reply.games, reply.pending) == (3, 1)
            assert {x.version for x in book.lessons} == {"v1"}
            assert book.limits == Limits(game_time_s=60.0, move_time_s=0.0, memory_mb=120.0)
            assert not any(secret in reply.lessons for secret in SECRETS)

    _run(tmp_path, check)


@pytest.mark.slow
def test_another_students_token_gets_nothing(tmp_path: Path) -> None:
    """bob naming alice is refused; bob asking for alice's bot gets an empty file; a wrong
    token is unauthenticated."""

    async def check(klass: Class) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await _lessons(klass, klass.tokens["bob"], player="alice")
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "only your own" in (denied.value.details() or "")
        reply = await _lessons(klass, klass.tokens["bob"], bot="ant")
        assert read_lessons(reply.lessons).lessons == () and reply.games == 0
        with pytest.raises(grpc.aio.AioRpcError) as wrong:
            await _lessons(klass, "not-a-token")
        assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED

    _run(tmp_path, check)


@pytest.mark.slow
def test_the_instructor_reads_everyones_or_one_players(tmp_path: Path) -> None:
    """carol's token reads both bots' lessons, or alice's alone when she names her."""

    async def check(klass: Class) -> None:
        everyone = read_lessons((await _lessons(klass, klass.tokens["carol"])).lessons)
        assert {x.bot for x in everyone.lessons} == {"ant", "bee"}
        alice = read_lessons((await _lessons(klass, klass.tokens["carol"], player="alice")).lessons)
        assert {x.bot for x in alice.lessons} == {"ant"}

    _run(tmp_path, check)


@pytest.mark.slow
def test_a_game_not_yet_analysed_is_analysed_once_and_then_counted(tmp_path: Path) -> None:
    """The first call queues the unanalysed game; once the analyst has stored it, the next
    call has no pending game and more lessons, and the analysis is kept in the database."""

    async def check(klass: Class) -> None:
        first = await _lessons(klass, klass.tokens["alice"], bot="ant", version="v1")
        assert first.pending == 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        while klass.analyst.pending(klass.games[2]):
            assert loop.time() < deadline, "the analysis did not finish"
            await asyncio.sleep(0.05)
        second = await _lessons(klass, klass.tokens["alice"], bot="ant", version="v1")
        assert second.pending == 0
        assert len(read_lessons(second.lessons).lessons) > len(read_lessons(first.lessons).lessons)
        assert "analysis" in (klass.repo.get_game(klass.games[2]).record_json or {})

    _run(tmp_path, check, "thread")


@pytest.mark.slow
def test_the_sdk_command_fetches_the_students_own_lessons(tmp_path: Path) -> None:
    """``python -m client_sdk lessons --server`` writes alice's lessons file (ant's only) with
    her token from a file; bob's token naming alice fails with status 1 and the reason."""

    async def check(klass: Class) -> None:
        token = tmp_path / "alice.token"
        token.write_text(klass.tokens["alice"])
        out = tmp_path / "mine.jsonl"
        args = ("lessons", "--server", klass.address, "--json")
        code, stdout, stderr = await _cli(*args, "--token-file", str(token), "-o", str(out))
        assert code == 0, stderr
        assert json.loads(stdout.splitlines()[-1])["games"] == 3
        assert {x.bot for x in read_lessons(out.read_text("utf-8")).lessons} == {"ant"}
        code, _, stderr = await _cli(*args, "--token", klass.tokens["bob"], "--player", "alice")
        assert code == 1 and "only your own" in stderr

    _run(tmp_path, check)


async def _cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_sdk",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
