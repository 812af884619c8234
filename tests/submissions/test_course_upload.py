"""Uploading a course bot laid out as the course runs it: the agent package with a helper
folder without ``__init__.py`` (``--helper utils``) and a helper module is accepted after its
sandboxed validation game; left without its helper, the rejection names the missing helper and
how to upload it, rather than blaming the student for importing their own code."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from upload_harness import submit_cli, upload_server

COURSE = Path(__file__).resolve().parents[1] / "sandbox" / "bots" / "course_layout"

pytestmark = pytest.mark.slow


def test_a_course_bot_with_a_namespace_helper_folder_is_accepted(tmp_path: Path) -> None:
    """``submit agent --helper utils --helper helpermod``: accepted, validated in the sandbox."""
    shutil.copytree(COURSE, tmp_path / "bot")

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            args = ("--helper", "utils", "--helper", "helpermod")
            result = await submit_cli(up, "alice", str(tmp_path / "bot" / "agent"), *args)
            assert result["status"] == "accepted", result
            assert result["sandbox"].startswith("bwrap"), result["sandbox"]

    asyncio.run(main())


def test_a_helper_left_out_is_named_with_the_way_to_upload_it(tmp_path: Path) -> None:
    """Without ``--helper utils`` the rejection says ``utils`` is not in the upload and to
    pass ``--helper utils``."""
    shutil.copytree(COURSE, tmp_path / "bot")

    async def main() -> None:
        async with upload_server(tmp_path) as up:
            args = ("--helper", "helpermod")
            result = await submit_cli(up, "alice", str(tmp_path / "bot" / "agent"), *args)
            assert result["status"] == "rejected", result
            assert "'utils" in result["reason"] and "--helper utils" in result["reason"]
            assert "neither in your upload" in result["reason"]

    asyncio.run(main())
