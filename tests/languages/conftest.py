"""Building the C++ and JavaScript clients once per test session (a lock keeps two pytest-xdist
workers from building the same folder at once). A missing toolchain skips, except under
``CI=true``, where it fails: deploy/install.sh installs them."""

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
def _locked(folder: Path) -> Iterator[None]:
    lock_path = Path(tempfile.gettempdir()) / f"tetromino-{folder.name}-build.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (
        f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )


@pytest.fixture(scope="session")
def cpp_bots() -> Path:
    """The C++ client's build folder (built with cmake from the repository's protos/)."""
    require("cmake", "protoc", "grpc_cpp_plugin", "g++", "pkg-config")
    build = CPP / "build"
    with _locked(CPP):
        _run(["cmake", "-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Release"], CPP)
        _run(["cmake", "--build", "build", "-j2"], CPP)
    return build


@pytest.fixture(scope="session")
def js_bots() -> Path:
    """The JavaScript client with its locked dependencies installed (npm ci)."""
    require("node", "npm")
    with _locked(JS):
        if not (JS / "node_modules" / "@grpc" / "grpc-js").is_dir():
            _run(["npm", "ci", "--no-audit", "--no-fund"], JS)
    return JS


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
