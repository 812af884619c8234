"""Whether this server can build C++ and JavaScript uploads: one rule, said by the build and
by ``referee doctor`` alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.doctor import Context, Status, checks
from referee.submissions.build import (
    BuildUnavailable,
    Toolchains,
    build_upload,
    cannot_build,
    make_client,
)


def test_a_server_without_the_client_builds_says_what_is_missing_and_the_fix(
    tmp_path: Path,
) -> None:
    """With no C++ client build and no JS packages, each language names what is missing and
    the command that makes it, and the build refuses with that same sentence."""
    bare = Toolchains(
        cpp_build=tmp_path / "build", cpp_source=tmp_path / "none", js_client=tmp_path / "js"
    )
    cpp, js = cannot_build("cpp", bare), cannot_build("javascript", bare)
    assert cpp is not None and "libtetromino_client.a" in cpp and "cmake --build" in cpp
    assert js is not None and "npm ci in clients/js" in js
    assert cannot_build("cobol", bare) == "no build for language 'cobol'"
    source = tmp_path / "upload"
    source.mkdir()
    (source / "main.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "out").mkdir()
    with pytest.raises(BuildUnavailable) as refused:
        build_upload(source, "cpp", "main.cpp", tmp_path / "out", contained=False, tools=bare)
    assert str(refused.value) == cpp


def test_doctor_says_when_uploads_in_other_languages_would_stay_validating(
    tmp_path: Path,
) -> None:
    """``referee doctor``'s line is degraded with both fixes when neither client is there."""
    bare = Toolchains(
        cpp_build=tmp_path / "build", cpp_source=tmp_path / "none", js_client=tmp_path / "js"
    )
    check = checks._uploads_in_other_languages(Context(), bare)
    assert check.status is Status.DEGRADED
    assert "stay validating" in check.detail
    assert "cmake --build clients/cpp/build" in check.fix and "npm ci in clients/js" in check.fix


@pytest.mark.slow
def test_with_both_clients_built_the_server_builds_both(cpp_bots: Path, js_bots: Path) -> None:
    """With clients/cpp built and clients/js's packages installed (as install.sh leaves
    them), both languages build and the doctor's line says so."""
    assert cannot_build("cpp") is None and cannot_build("javascript") is None
    assert checks._uploads_in_other_languages(Context()).status is Status.WORKS


#: A stand-in for cmake: records each call and, on ``--build``, leaves what a client build
#: leaves (the library and the generated code), or fails when the sources say so.
FAKE_CMAKE = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/calls"
if [ -e "$(dirname "$0")/src/FAIL" ]; then echo "CMake Error: no grpc++ found" >&2; exit 1; fi
case "$1" in --build) mkdir -p "$2/generated" && : > "$2/libtetromino_client.a";; esac
"""


def _fake_client(tmp_path: Path) -> Toolchains:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text("project(fake)\n")
    cmake = tmp_path / "cmake"
    cmake.write_text(FAKE_CMAKE)
    cmake.chmod(0o755)
    return Toolchains(
        cpp_build=tmp_path / "src" / "build", cpp_source=tmp_path / "src", cmake=str(cmake)
    )


@pytest.mark.slow
def test_a_server_without_the_client_build_makes_it_once_at_the_first_cpp_upload(
    tmp_path: Path,
) -> None:
    """With the client's sources and cmake but no build, the server can build C++ uploads:
    the first one configures and builds the client (once), later ones find it."""
    tools = _fake_client(tmp_path)
    assert cannot_build("cpp", tools) is None
    make_client(tools)
    make_client(tools)
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[0] for c in calls] == ["-S", "--build"]
    assert (tools.cpp_build / "libtetromino_client.a").is_file()


@pytest.mark.slow
def test_a_client_build_that_fails_is_the_servers_failure_with_its_output(
    tmp_path: Path,
) -> None:
    """A client build that fails raises BuildUnavailable (the version stays validating, never
    the student's compile error) with the end of cmake's output."""
    tools = _fake_client(tmp_path)
    (tools.cpp_source / "FAIL").write_text("")
    with pytest.raises(BuildUnavailable, match="no grpc\\+\\+ found"):
        make_client(tools)
    assert not (tools.cpp_build / "libtetromino_client.a").exists()
