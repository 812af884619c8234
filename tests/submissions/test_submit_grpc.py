"""Uploads end to end: a real server, real gRPC uploads (the real CLI), real validation games
played by real sandboxed bot processes."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from hostile import (
    GOOD_SDK_BOT,
    tar_member,
    tar_of,
    zip_bomb,
    zip_of,
    zip_with_symlink,
)
from upload_harness import (
    REPO,
    cli,
    mine,
    submit_cli,
    submit_raw,
    upload_server,
    write_tree,
)

from client_sdk.proto import submissions_pb2 as spb
from client_sdk.proto import submissions_pb2_grpc
from referee.storage import submissions as rows
from referee.submissions.limits import UploadLimits

pytestmark = pytest.mark.slow

HELPER_BOT = """
from client_sdk import Agent
from mylib.pick import first


class Bot(Agent):
    def choose_move(self, state, clocks):
        return first(state.legal_moves)
"""


def test_good_course_bot_is_accepted_and_listed(tmp_path: Path) -> None:
    """A course-style package uploads, wins its validation game's acceptance, and is listed
    as the student's playing version with its output."""
    shutil.copytree(REPO / "client_sdk/examples/course_greedy", tmp_path / "agent")

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            result = await submit_cli(up, "alice", str(tmp_path / "agent"))
            assert result["status"] == "accepted", result
            assert result["bot"] == "alice-agent" and result["exit_code"] == 0
            assert result["version"] == result["digest"][:12]
            assert "without a fault" in result["reason"]
            assert "[client_sdk] connected" in result["output"]
            # Validation ran in the sandbox, and says so.
            assert result["sandbox"].startswith("bwrap"), result["sandbox"]
            listed = await mine(up, up.tokens["alice"])
            [version] = listed.versions
            assert (version.bot, version.status) == ("alice-agent", "accepted")
            assert version.playing
            assert "[client_sdk]" in version.output
            stored = rows.get_submission(up.repo.db, "alice-agent")
            assert stored.location.startswith(str(up.store.versions / stored.digest))

    asyncio.run(main())


def test_good_sdk_module_with_name(tmp_path: Path) -> None:
    """A single SDK module file uploads under the name the student gives; a name that would
    read as a module path (spoofing an instructor's bot) is refused."""
    write_tree(tmp_path, {"sdkbot.py": GOOD_SDK_BOT})

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            result = await submit_cli(up, "alice", str(tmp_path / "sdkbot.py"), "--name", "zed")
            assert (result["bot"], result["status"]) == ("zed", "accepted"), result
            spoof = "client_sdk.examples.greedy_bot"
            refused = await submit_cli(up, "alice", str(tmp_path / "sdkbot.py"), "--name", spoof)
            assert refused["status"] == "rejected" and "no dots" in refused["reason"]

    asyncio.run(main())


def test_helper_packages_named_by_manifest_or_option(tmp_path: Path) -> None:
    """A helper package beside the bot goes up when the package's submission.json or
    --helper names it; left out, the import is refused by name."""
    write_tree(
        tmp_path,
        {
            "withhelper/__init__.py": HELPER_BOT,
            "mylib/__init__.py": "",
            "mylib/pick.py": "def first(moves):\n    return list(moves)[0]\n",
            "plain/__init__.py": HELPER_BOT,
        },
    )

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            forgot = await submit_cli(up, "alice", str(tmp_path / "plain"))
            assert forgot["status"] == "rejected" and "'mylib.pick'" in forgot["reason"]
            named = await submit_cli(up, "alice", str(tmp_path / "plain"), "--helper", "mylib")
            assert named["status"] == "accepted", named
            (tmp_path / "withhelper/submission.json").write_text('{"helpers": ["mylib"]}')
            manifest = await submit_cli(up, "alice", str(tmp_path / "withhelper"))
            assert manifest["status"] == "accepted", manifest

    asyncio.run(main())


def test_crash_at_import_is_rejected_with_its_output(tmp_path: Path) -> None:
    """A bot that raises while being imported is rejected; the student sees the traceback."""
    write_tree(tmp_path, {"crasher.py": GOOD_SDK_BOT + "\nraise RuntimeError('boom at import')\n"})

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            result = await submit_cli(up, "alice", str(tmp_path / "crasher.py"))
            assert result["status"] == "rejected" and result["exit_code"] == 1
            assert "boom at import" in result["output"]
            assert "fault" in result["reason"]
            listed = await mine(up, up.tokens["alice"])
            assert [v.playing for v in listed.versions] == [False]

    asyncio.run(main())


def test_missing_packages_are_named(tmp_path: Path) -> None:
    """`import torch` is refused before any game; a dynamic import of a missing module fails
    the validation game; both sentences name the module."""
    write_tree(
        tmp_path,
        {
            "needs_torch.py": "import torch\n" + GOOD_SDK_BOT,
            "dynamic.py": "import importlib\nimportlib.import_module('tetromino_nowhere')\n"
            + GOOD_SDK_BOT,
        },
    )

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            static = await submit_cli(up, "alice", str(tmp_path / "needs_torch.py"))
            assert static["status"] == "rejected"
            assert "'torch'" in static["reason"] and "NumPy" in static["reason"]
            dynamic = await submit_cli(up, "alice", str(tmp_path / "dynamic.py"))
            assert dynamic["status"] == "rejected"
            assert "'tetromino_nowhere'" in dynamic["reason"], dynamic["reason"]

    asyncio.run(main())


def test_bad_archives_over_grpc_are_refused_and_nothing_is_kept(tmp_path: Path) -> None:
    """Every hostile archive sent over gRPC ends in INVALID_ARGUMENT with its reason; the
    store and the database stay empty and nothing lands outside the store."""
    limits = UploadLimits(max_archive_bytes=300_000, max_unpacked_bytes=3_000_000, max_files=30)
    cases = {
        "zip-slip": (zip_of({"bot.py": GOOD_SDK_BOT, "../../evil.py": "x"}), "'..'"),
        "symlink out": (zip_with_symlink("agent.py", "/etc/passwd"), "symbolic link"),
        "tar symlink": (
            tar_of([tar_member("evil", b"2", "../../../../etc/passwd")]),
            "symbolic link",
        ),
        "bomb": (zip_bomb(60), "compression bomb"),
        "oversize": (os.urandom(400_000), "over the upload limit"),
        "too many files": (zip_of({f"p/m{i}.py": "" for i in range(31)}), "more than 30 files"),
        "not an archive": (b"#!/bin/sh\nrm -rf /\n" * 10, "not a zip or tar archive"),
    }

    async def main() -> None:
        async with upload_server(tmp_path, limits) as up:
            before = sorted(p.name for p in tmp_path.iterdir())
            for label, (data, words) in cases.items():
                events, error = await submit_raw(up, up.tokens["alice"], data)
                assert error is not None and not events, label
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, label
                assert words in (error.details() or ""), (label, error.details())
            assert rows.list_submissions(up.repo.db) == []
            assert list(up.store.versions.iterdir()) == []
            assert list(up.store.incoming.iterdir()) == []
            assert sorted(p.name for p in tmp_path.iterdir()) == before
            assert not Path("/etc/evil.py").exists()

    asyncio.run(main())


def test_tokens_and_quotas(tmp_path: Path) -> None:
    """A wrong token is refused with a sentence; past the rate or the storage quota an upload is
    RESOURCE_EXHAUSTED with a sentence saying which quota."""
    limits = UploadLimits(max_submissions_per_window=2, max_stored_bytes_per_player=1000)
    big = zip_of({"bot.py": GOOD_SDK_BOT + "#" * 2000})
    write_tree(tmp_path, {"bot.py": GOOD_SDK_BOT})

    async def main() -> None:
        async with upload_server(tmp_path, limits, players=("alice", "bob")) as up:
            up.tokens["intruder"] = "arena_0000000000000000_nope"
            refused = await submit_cli(up, "intruder", str(tmp_path / "bot.py"))
            assert refused["status"] == "rejected" and refused["exit_code"] == 1
            assert "a valid player token is required" in refused["reason"]
            _, error = await submit_raw(up, up.tokens["bob"], big)
            assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "storage quota" in (error.details() or "")
            for _ in range(2):
                _, error = await submit_raw(up, up.tokens["alice"], b"not an archive")
                assert error is not None and error.code() == grpc.StatusCode.INVALID_ARGUMENT
            _, error = await submit_raw(up, up.tokens["alice"], zip_of({"bot.py": GOOD_SDK_BOT}))
            assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "submission rate" in (error.details() or "")
            code, _, err = await cli(
                "mine", "--server", up.address, "--token", "arena_0000000000000000_nope"
            )
            assert code == 1 and "token" in err

    asyncio.run(main())


def test_a_stalled_upload_is_cut_off(tmp_path: Path) -> None:
    """A client that starts an upload and then sends nothing is cut off (DEADLINE_EXCEEDED);
    while it hangs, a second upload of the same player is refused; afterwards uploads work."""

    async def stalled(token: str, address: str, started: asyncio.Event) -> grpc.StatusCode:
        async def requests() -> AsyncIterator[spb.SubmitRequest]:
            yield spb.SubmitRequest(start=spb.SubmitStart())
            started.set()
            await asyncio.sleep(30)  # not a wait: the stalled upload itself

        async with grpc.aio.insecure_channel(address) as channel:
            stub = submissions_pb2_grpc.SubmissionsStub(channel)
            call = stub.Submit(requests(), metadata=[("authorization", f"Bearer {token}")])
            try:
                async for _ in call:
                    pass
            except grpc.aio.AioRpcError as exc:
                return exc.code()
        return grpc.StatusCode.OK

    async def main() -> None:
        # 8 s: the second upload below must reach the server while the first still hangs,
        # and on a loaded machine opening its channel can take seconds.
        async with upload_server(tmp_path, upload_timeout_s=8.0) as up:
            started = asyncio.Event()
            hanging = asyncio.create_task(stalled(up.tokens["alice"], up.address, started))
            await started.wait()
            while not up.service.receiving("alice"):  # the server has taken the upload up
                await asyncio.sleep(0.01)
            _, error = await submit_raw(up, up.tokens["alice"], b"x")
            assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "one upload at a time" in (error.details() or "")
            assert await hanging == grpc.StatusCode.DEADLINE_EXCEEDED
            _, error = await submit_raw(up, up.tokens["alice"], b"x")
            assert error is not None and "not a zip or tar" in (error.details() or "")

    asyncio.run(main())
