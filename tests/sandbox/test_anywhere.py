"""The sandbox works wherever people put the platform: a real sandboxed game with the checkout,
a real virtualenv (its interpreter links, ``pyvenv.cfg`` and package files) and a course bot
all placed in a private home (mode 0700), as root and as a normal user, and in a clone under
``/tmp`` (which the sandbox covers with its own scratch); the referee is run from there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .placed import as_user, interpreter_for, place, placed_env, referee_argv
from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

COURSE = Path(__file__).parent / "bots" / "course_layout"
#: A uid no account uses, for "a normal user" when the suite runs as root.
NORMAL_UID = 1_899_000_017


def _folder(parent: str, mode: int) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="arena-placed-", dir=parent))
    folder.chmod(mode)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def private_home() -> Iterator[Path]:
    """A home folder of mode 0700 outside /tmp (as /root is)."""
    yield from _folder("/var/tmp", 0o700)


@pytest.fixture
def tmp_clone() -> Iterator[Path]:
    """A world-readable folder directly under /tmp (a clone in /tmp/arena)."""
    yield from _folder("/tmp", 0o755)


def _play(where: Path, python: Path, uid: int | None = None) -> tuple[dict, str]:
    """``referee match`` of the placed copy, between the course bot placed beside it and the
    SDK's random bot, run from ``where`` as ``uid`` (None: this user)."""
    bot = where / "bots" / "agent"
    argv = referee_argv(python, "match", str(bot), "client_sdk.examples.random_bot", "--json")
    argv += ["--param", "turn_limit=20"]
    done = subprocess.run(
        [*as_user(uid), *argv],
        cwd=where,
        env=placed_env(python),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _place_all(where: Path, interpreter: str | None = None) -> Path:
    shutil.copytree(COURSE, where / "bots")
    return place(where, interpreter)


def _assert_sandboxed(summary: dict, stderr: str) -> None:
    assert summary["sandbox"] == "bwrap", stderr
    assert summary["verdict"] in ("normal", "turn_limit"), summary
    assert "WITHOUT the sandbox" not in stderr


def test_a_checkout_venv_and_bot_in_a_private_home(private_home: Path) -> None:
    """Checkout, virtualenv and bot in a 0700 home, referee run by its owner (root in CI's
    usual case): a real sandboxed game, every bot uid reaching what it needs."""
    require_sandbox()
    python = _place_all(private_home)
    _assert_sandboxed(*_play(private_home, python))


def test_a_clone_under_tmp(tmp_clone: Path) -> None:
    """Checkout and virtualenv under /tmp, which the sandbox lays its scratch over: the
    interpreter and packages must still be there inside."""
    require_sandbox()
    python = _place_all(tmp_clone)
    _assert_sandboxed(*_play(tmp_clone, python))


def test_a_normal_users_private_home_under_tmp(tmp_clone: Path) -> None:
    """A normal user's 0700 home (under /tmp here) holding checkout, virtualenv and bot, the
    referee run as that user (through setpriv when the suite runs as root). A fresh uid has no
    cgroup of its own: doctor calls memory degraded, and the game says how it measured."""
    require_sandbox()
    uid = NORMAL_UID if os.geteuid() == 0 else None
    home = tmp_clone / "home"
    home.mkdir()
    python = _place_all(home, interpreter_for(other_user=uid is not None))
    if uid is not None:
        subprocess.run(["chown", "-R", f"{uid}:{uid}", str(home)], check=True)
    home.chmod(0o700)
    summary, stderr = _play(home, python, uid)
    _assert_sandboxed(summary, stderr)
    if uid is None:
        return
    doctor = subprocess.run(
        [*as_user(uid), *referee_argv(python, "doctor", "--json")],
        cwd=home,
        env=placed_env(python),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["checkout and venv for bots"]["status"] == "works", checks
    assert checks["memory cgroup"]["status"] == "degraded" and checks["memory cgroup"]["fix"]
    assert checks["per-bot uids"]["status"] == "degraded"
    seats = summary["seats"].values()
    assert {seat["memory_measured_by"] for seat in seats} == {"rss_poll"}, summary
