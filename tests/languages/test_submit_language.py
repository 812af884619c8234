"""`python -m client_sdk submit --language`: what a C++ or JavaScript upload sends, and the
sentence for a C++ or JavaScript folder given as a Python bot."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from client_sdk._packing import PackError
from client_sdk._sources import pack_sources
from client_sdk._submit import submit_main
from tests.languages.toolchains import CPP, JS


def _names(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_a_cpp_upload_sends_its_sources_and_declares_the_language(tmp_path: Path) -> None:
    """The entry and the C++ files beside it go, with submission.json; nothing else."""
    (tmp_path / "bot.cpp").write_text("int main() {}\n")
    (tmp_path / "eval.h").write_text("int eval();\n")
    (tmp_path / "notes.txt").write_text("private")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "bot").write_text("a binary")
    files = _names(pack_sources(str(tmp_path / "bot.cpp"), "cpp").data)
    assert sorted(files) == ["bot.cpp", "eval.h", "submission.json"]
    assert json.loads(files["submission.json"]) == {"entry": "bot.cpp", "language": "cpp"}


def test_a_javascript_upload_leaves_the_package_files_out(tmp_path: Path) -> None:
    """package.json, its lock and node_modules stay home: the server bundles its own client."""
    for name in ("bot.js", "util.js", "package.json", "package-lock.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "node_modules").mkdir()
    files = _names(pack_sources(str(tmp_path / "bot.js"), "javascript").data)
    assert sorted(files) == ["bot.js", "submission.json", "util.js"]
    with pytest.raises(PackError, match=r"a folder; with --language javascript"):
        pack_sources(str(tmp_path), "javascript")
    with pytest.raises(PackError, match=r"not a \.cpp or \.cc file"):
        pack_sources(str(tmp_path / "bot.js"), "cpp")


@pytest.mark.parametrize(
    ("folder", "language"), [(CPP, "cpp"), (JS, "javascript")], ids=["cpp", "javascript"]
)
def test_a_cpp_or_js_folder_given_as_a_python_bot_is_named(
    folder: Path, language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """submit without --language on clients/cpp or clients/js says to use --language."""
    argv = ["--server", "127.0.0.1:1", "--token", "t", "--json", str(folder)]
    assert submit_main(argv) == 2
    reason = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["reason"]
    assert f"a {language} project, not a Python bot" in reason
    assert f"--language {language}" in reason
