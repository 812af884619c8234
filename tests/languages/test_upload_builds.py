"""The server's build of a C++ or JavaScript upload (referee/submissions/build.py): in the
sandbox, under its time, memory and output limits, the compiler's first errors as the
student's verdict, the artefact hashed and sealed in the store."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from referee.storage.content import content_hash
from referee.submissions.build import ARTEFACT, BuildFailed, BuildLimits, build_upload
from referee.submissions.limits import UploadLimits
from referee.submissions.store import SubmissionStore
from tests.languages.toolchains import CPP
from tests.sandbox.sandbox_required import require_sandbox

pytestmark = pytest.mark.slow
LIMITS = BuildLimits()


def _source(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "src"
    folder.mkdir(parents=True)
    (folder / name).write_text(text)
    out = tmp_path / "out"
    out.mkdir()
    return folder


def _cpp_fails(tmp_path: Path, text: str, limits: BuildLimits | None = None) -> str:
    source = _source(tmp_path, "bot.cpp", text)
    with pytest.raises(BuildFailed) as failed:
        build_upload(
            source, "cpp", "bot.cpp", tmp_path / "out", contained=True, limits=limits or LIMITS
        )
    return str(failed.value)


def test_a_compile_error_shows_the_compilers_first_errors_only(
    cpp_bots: Path, tmp_path: Path
) -> None:
    """Hundreds of errors: the verdict holds the first ones, bounded, and says more were cut."""
    require_sandbox()
    lines = "".join(f"int f{i}() {{ return missing_{i}; }}\n" for i in range(300))
    reason = _cpp_fails(tmp_path, lines + "int main() {}\n")
    assert "the C++ build failed" in reason and "missing_0" in reason
    assert "missing_299" not in reason and "more characters of output" in reason
    assert len(reason) < BuildLimits().shown_chars + 200


def test_a_build_sees_none_of_the_hosts_files(cpp_bots: Path, tmp_path: Path) -> None:
    """An upload including a host file by its path fails to find it: the build is contained."""
    require_sandbox()
    secret = tmp_path / "secret.h"
    secret.write_text("#error the host's secret 6f1d2c was read\n")
    reason = _cpp_fails(tmp_path, f'#include "{secret}"\nint main() {{}}\n')
    assert "No such file or directory" in reason and "6f1d2c" not in reason


def test_the_builds_time_and_memory_limits_stop_it(cpp_bots: Path, tmp_path: Path) -> None:
    """A build over its time limit is stopped and said so; one over its memory limit fails."""
    require_sandbox()
    greedy = (CPP / "examples" / "greedy_bot.cpp").read_text()
    slow = _cpp_fails(tmp_path / "t", greedy, BuildLimits(time_s=0.05))
    assert "took longer than 0.05 s and was stopped" in slow
    small = _cpp_fails(tmp_path / "m", greedy, BuildLimits(memory_mb=96))
    assert "the C++ build failed" in small


def test_a_javascript_upload_that_does_not_parse_is_refused(js_bots: Path, tmp_path: Path) -> None:
    """node --check's message, naming the file and line, is the verdict; nothing is bundled."""
    require_sandbox()
    source = _source(tmp_path, "bot.js", "'use strict';\nconst x = ;\n")
    with pytest.raises(BuildFailed, match=r"JavaScript check failed[\s\S]*bot\.js:2"):
        build_upload(source, "javascript", "bot.js", tmp_path / "out", contained=True)
    assert not (tmp_path / "out" / "js").exists()


def test_the_artefact_is_stored_hashed_and_read_only(cpp_bots: Path, tmp_path: Path) -> None:
    """The store builds a version once, under builds/<digest>, with the artefact's hash."""
    require_sandbox()
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("submission.json", '{"entry": "greedy_bot.cpp", "language": "cpp"}')
        archive.write(CPP / "examples" / "greedy_bot.cpp", "greedy_bot.cpp")
    store = SubmissionStore(tmp_path / "store")
    stored = store.ingest(data.getvalue(), UploadLimits())
    command = store.build(stored.digest, stored.entry, contained=True)
    folder = store.build_of(stored.digest)
    assert command == str(folder / "bot")
    manifest = json.loads((folder / ARTEFACT).read_text())
    assert (manifest["language"], manifest["entry"]) == ("cpp", "greedy_bot.cpp")
    shutil.copytree(folder, tmp_path / "copy", ignore=shutil.ignore_patterns(ARTEFACT))
    assert manifest["sha256"] == content_hash(tmp_path / "copy")
    assert os.stat(folder / "bot").st_mode & 0o777 == 0o555
    assert not os.access(folder, os.W_OK) or os.geteuid() == 0
    mtime = (folder / "bot").stat().st_mtime_ns
    assert store.build(stored.digest, stored.entry, contained=True) == command
    assert (folder / "bot").stat().st_mtime_ns == mtime
