"""What the language tests share: the clients' folders, the toolchain check (a missing
toolchain skips, except under ``CI=true``, where it fails: deploy/install.sh installs them), a
lock so that two pytest-xdist workers never build one folder at once, and the kit's report."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPP = ROOT / "clients" / "cpp"
JS = ROOT / "clients" / "js"
REFEREE = [sys.executable, "-m", "referee"]


def require(*tools: str) -> None:
    """Skip (fail under CI=true) when one of ``tools`` is not on PATH."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if not missing:
        return
    message = f"missing toolchain: {', '.join(missing)} (deploy/install.sh installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: the language tests must run)")
    pytest.skip(message)


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    lock_path = Path(tempfile.gettempdir()) / f"tetromino-{folder.name}-build.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (
        f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )


def conformance(*command: str) -> dict[str, object]:
    """The conformance kit's JSON report on ``command``."""
    done = subprocess.run(
        [*REFEREE, "conformance", "--json", "--", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert (done.returncode == 0) == report["ok"], done.stderr
    return report
