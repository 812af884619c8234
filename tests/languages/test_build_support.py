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
)


def test_a_server_without_the_client_builds_says_what_is_missing_and_the_fix(
    tmp_path: Path,
) -> None:
    """With no C++ client build and no JS packages, each language names what is missing and
    the command that makes it, and the build refuses with that same sentence."""
    bare = Toolchains(cpp_build=tmp_path / "build", js_client=tmp_path / "js")
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
    bare = Toolchains(cpp_build=tmp_path / "build", js_client=tmp_path / "js")
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
