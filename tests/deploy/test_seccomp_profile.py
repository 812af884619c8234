"""The seccomp profile shipped for containers (deploy/helm/tetromino/files/) lets the bot
sandbox work: a real `referee match` run under it, as a container runtime would load it, plays
its launched bots in bubblewrap; the same profile refusing the namespace calls (what Docker's
default profile does to a process without CAP_SYS_ADMIN) leaves them uncontained, said so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "deploy" / "helm" / "tetromino" / "files" / "referee-sandbox.seccomp.json"
UNDER = Path(__file__).parent / "helpers" / "under_profile.py"


def _match_under(profile: Path) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [
            sys.executable,
            str(UNDER),
            str(profile),
            sys.executable,
            "-m",
            "referee.commands.main",
            "match",
            "client_sdk.examples.random_bot",
            "client_sdk.examples.greedy_bot",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report, done.stderr


@pytest.mark.slow
def test_bots_are_sandboxed_under_the_shipped_profile() -> None:
    """Under the shipped profile the game is played with both bots in bubblewrap."""
    report, _ = _match_under(PROFILE)
    assert report["sandbox"] == "bwrap"
    assert report["verdict"] == "normal"


@pytest.mark.slow
def test_a_profile_without_namespaces_leaves_bots_uncontained_and_says_so(
    tmp_path: Path,
) -> None:
    """The control: the same profile also refusing unshare and mount makes the referee record
    sandbox: none and warn why, so the shipped profile's allowances are what the sandbox needs."""
    profile = json.loads(PROFILE.read_text())
    refused = {"names": ["unshare", "mount"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}
    profile["syscalls"].append(refused)
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps(profile))
    report, stderr = _match_under(strict)
    assert report["sandbox"] == "none"
    assert "WITHOUT the sandbox" in stderr
