"""A C++ build the build machinery broke (the process the referee started killed by a signal)
is run again once, and broken twice it is the server's failure, never the student's compile
error: the version stays ``validating``. The build starts without running Python in a forked
child of the referee, where gRPC's fork handlers crash it before exec."""

from __future__ import annotations

import asyncio
import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from referee.storage import Repository
from referee.storage.enums import SubmissionStatus
from referee.submissions.build import (
    BuildCrashed,
    BuildFailed,
    BuildUnavailable,
    Toolchains,
    build_upload,
)
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings
from tests.languages.toolchains import require

pytestmark = pytest.mark.slow

#: A compiler driver that is killed by SIGSEGV on its first ``CRASHES`` runs (each run is
#: counted in ``runs``), then writes the program named by its last argument.
FAKE_CXX = """#!/bin/sh
here=$(dirname "$0")
echo run >> "$here/runs"
if [ "$(wc -l < "$here/runs")" -le {crashes} ]; then kill -SEGV $$; fi
for last; do :; done
printf '#!/bin/sh\\n' > "$last"
chmod +x "$last"
"""

#: The write end of a pipe the at-fork hook writes to while a test watches (else None).
_WATCH: list[int] = []
_HOOKED: list[bool] = []


def _toolchains(tmp_path: Path, crashes: int) -> Toolchains:
    """The server's client build, faked: an empty library, and the fake compiler."""
    require("pkg-config")
    build = tmp_path / "toolkit" / "build"
    (build / "generated").mkdir(parents=True)
    (build / "libtetromino_client.a").write_bytes(b"")
    cxx = tmp_path / "toolkit" / "cxx"
    cxx.write_text(FAKE_CXX.format(crashes=crashes))
    cxx.chmod(cxx.stat().st_mode | stat.S_IXUSR)
    return Toolchains(cpp_build=build, cxx=str(cxx))


def _build(tmp_path: Path, tools: Toolchains) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.cpp").write_text("int main() {}\n")
    out = tmp_path / "out"
    out.mkdir()
    build_upload(source, "cpp", "bot.cpp", out, contained=False, tools=tools)
    return out


def _runs(tools: Toolchains) -> int:
    return len((Path(tools.cxx).parent / "runs").read_text().splitlines())


def test_a_build_killed_by_a_signal_once_is_run_again(tmp_path: Path) -> None:
    """A compiler killed by SIGSEGV at its first run is run again, and the build succeeds."""
    tools = _toolchains(tmp_path, crashes=1)
    out = _build(tmp_path, tools)
    assert _runs(tools) == 2
    assert os.access(out / "bot", os.X_OK)


def test_a_build_killed_at_each_attempt_is_the_servers_failure(tmp_path: Path) -> None:
    """Killed at both attempts: BuildCrashed (the server's), not the student's BuildFailed."""
    tools = _toolchains(tmp_path, crashes=2)
    with pytest.raises(BuildCrashed) as crashed:
        _build(tmp_path, tools)
    assert isinstance(crashed.value, BuildUnavailable)
    assert not isinstance(crashed.value, BuildFailed)
    reason = str(crashed.value)
    assert "the build crashed" in reason and "SIGSEGV" in reason
    assert "not a compile error" in reason
    assert _runs(tools) == 2


def test_a_crashed_build_leaves_the_version_validating(tmp_path: Path) -> None:
    """The upload whose build crashes twice is not rejected: it stays validating, postponed,
    and the sentence says the build crashed."""
    tools = _toolchains(tmp_path, crashes=2)
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("alice")
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("submission.json", '{"entry": "bot.cpp", "language": "cpp"}')
        archive.writestr("bot.cpp", "int main() {}\n")
    store = SubmissionStore(tmp_path / "store", tools=tools)
    service = Submissions(repo, store, validation=ValidationSettings(no_sandbox=True))
    try:
        result = asyncio.run(service.submit("alice", data.getvalue(), "cee"))
    finally:
        repo.close()
    assert result.status is SubmissionStatus.VALIDATING, result
    assert result.reason.startswith("validation postponed: the build crashed"), result.reason
    assert "compile error" not in result.reason.replace("not a compile error", "")
    assert _runs(tools) == 2


def _mark_child() -> None:
    if _WATCH:
        os.write(_WATCH[0], b"Python ran in the forked child\n")


def test_a_build_runs_no_python_in_the_forked_child(tmp_path: Path) -> None:
    """Starting a build runs none of the referee's at-fork hooks: no Python (nor gRPC's fork
    handlers, which crash such a child of the threaded referee) runs between fork and exec."""
    if not _HOOKED:
        os.register_at_fork(after_in_child=_mark_child)
        _HOOKED.append(True)
    tools = _toolchains(tmp_path, crashes=0)
    read, write = os.pipe()
    _WATCH.append(write)
    try:
        _build(tmp_path, tools)
    finally:
        _WATCH.clear()
        os.close(write)
    with os.fdopen(read, "rb") as seen:
        assert seen.read() == b""
    assert _runs(tools) == 1
