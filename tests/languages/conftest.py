"""The C++ and JavaScript clients, built once per test session."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from tests.languages.toolchains import CPP, JS, locked, require, run


@pytest.fixture(scope="session")
def cpp_bots() -> Path:
    """The C++ client's build folder (built with cmake from the repository's protos/)."""
    require("cmake", "protoc", "grpc_cpp_plugin", "g++", "pkg-config")
    build = CPP / "build"
    # The referee's own lock for this build (it makes the build at a first C++ upload).
    with (CPP / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run(["cmake", "-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Release"], CPP)
        run(["cmake", "--build", "build", "-j2"], CPP)
    return build


@pytest.fixture(scope="session")
def js_bots() -> Path:
    """The JavaScript client with its locked dependencies installed (npm ci)."""
    require("node", "npm")
    with locked(JS):
        if not (JS / "node_modules" / "@grpc" / "grpc-js").is_dir():
            run(["npm", "ci", "--no-audit", "--no-fund"], JS)
        elif not (JS / "protos").is_dir():
            # node_modules came without npm ci's prepare step (a copied checkout): the copy of
            # protos/ a sandboxed JS bot needs is made the same way, with no network.
            run(["node", "scripts/copy-protos.js"], JS)
    return JS
