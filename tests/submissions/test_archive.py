"""Hostile archives are refused with a clear reason, and nothing is written outside the store."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest
from hostile import (
    GOOD_SDK_BOT,
    tar_bomb,
    tar_member,
    tar_of,
    zip_bomb,
    zip_lying_about_size,
    zip_of,
    zip_with_symlink,
)

from referee.submissions.archive import unpack
from referee.submissions.errors import ArchiveRefused, LayoutError
from referee.submissions.limits import UploadLimits
from referee.submissions.store import SubmissionStore

LIMITS = UploadLimits(max_archive_bytes=200_000, max_unpacked_bytes=2_000_000, max_files=20)


def _everything_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _refused(tmp_path: Path, data: bytes, *words: str) -> str:
    """Ingest ``data`` into a fresh store; assert refusal naming ``words``, store left clean."""
    store = SubmissionStore(tmp_path / "store")
    before = _everything_under(tmp_path)
    with pytest.raises((ArchiveRefused, LayoutError)) as caught:
        store.ingest(data, LIMITS)
    message = str(caught.value)
    for word in words:
        assert word in message, message
    # Nothing new anywhere under tmp_path: not in the store, not beside it.
    assert _everything_under(tmp_path) == before
    assert not (tmp_path / "evil").exists() and not (tmp_path / "store" / "evil").exists()
    return message


def test_zip_slip_is_refused(tmp_path: Path) -> None:
    """A member named ../../evil (zip-slip) is refused before anything is written."""
    _refused(tmp_path, zip_of({"bot.py": GOOD_SDK_BOT, "../../evil": "x"}), "'..'")


def test_absolute_paths_are_refused(tmp_path: Path) -> None:
    """Absolute member names (Unix and Windows drive) are refused."""
    _refused(tmp_path, zip_of({"/tmp/evil": "x"}), "absolute")
    _refused(tmp_path, zip_of({"C:/evil": "x"}), "absolute")


def test_zip_symlink_out_is_refused(tmp_path: Path) -> None:
    """A zip member that is a symbolic link (pointing out of the store) is refused."""
    _refused(tmp_path, zip_with_symlink("link", "/etc/passwd"), "symbolic link")


def test_tar_links_and_devices_are_refused(tmp_path: Path) -> None:
    """Tar symlinks, hard links, character devices and FIFOs are refused."""
    ok = {"bot.py": GOOD_SDK_BOT.encode()}
    cases = [
        (tar_member("link", tarfile.SYMTYPE, "../../../etc/passwd"), "symbolic link"),
        (tar_member("hard", tarfile.LNKTYPE, "/etc/shadow"), "hard link"),
        (tar_member("tty", tarfile.CHRTYPE), "device"),
        (tar_member("pipe", tarfile.FIFOTYPE), "FIFO"),
    ]
    for member, words in cases:
        _refused(tmp_path, tar_of([tar_member("bot.py"), member], ok), words)


def test_zip_bomb_is_refused_before_inflating(tmp_path: Path) -> None:
    """A zip of zeros that would unpack to 50 MB is called a compression bomb."""
    data = zip_bomb(50)
    assert len(data) < LIMITS.max_archive_bytes
    _refused(tmp_path, data, "compression bomb")


def test_tar_bomb_is_cut_off(tmp_path: Path) -> None:
    """A gzip tar bomb is cut off at the unpacked limit, whatever its header says."""
    _refused(tmp_path, tar_bomb(40), "compression bomb")


def test_forged_sizes_are_caught_while_unpacking(tmp_path: Path) -> None:
    """A member holding more bytes than its header declares is refused while it is read."""
    data = zip_lying_about_size(b"#" * 50_000, declared=10)
    message = _refused(tmp_path, data)
    assert "declared" in message or "damaged" in message


def test_oversize_archive_is_refused(tmp_path: Path) -> None:
    """An archive over the compressed size limit is refused with both sizes named."""
    big = os.urandom(LIMITS.max_archive_bytes + 1)
    _refused(tmp_path, zip_of({"bot.py": GOOD_SDK_BOT, "blob.bin": big}), "over the limit")


def test_unpacked_limit_without_a_bomb(tmp_path: Path) -> None:
    """Incompressible content over the unpacked limit is refused as too large, not a bomb."""
    limits = UploadLimits(max_archive_bytes=5_000_000, max_unpacked_bytes=100_000)
    data = zip_of({"bot.py": GOOD_SDK_BOT, "a.bin": os.urandom(150_000)})
    with pytest.raises(ArchiveRefused, match="unpacks to more than"):
        unpack(data, tmp_path, limits)


def test_too_many_files_is_refused(tmp_path: Path) -> None:
    """More files than the limit is refused, naming the limit."""
    files = {f"pkg/m{i}.py": "" for i in range(LIMITS.max_files + 1)}
    _refused(tmp_path, zip_of(files), f"more than {LIMITS.max_files} files")


def test_not_an_archive_is_refused(tmp_path: Path) -> None:
    """Random bytes, a Python file, an empty upload and a truncated zip are refused."""
    _refused(tmp_path, os.urandom(5000), "not a zip or tar archive")
    _refused(tmp_path, GOOD_SDK_BOT.encode(), "not a zip or tar archive")
    _refused(tmp_path, b"", "empty")
    _refused(tmp_path, zip_of({"bot.py": GOOD_SDK_BOT})[:60], "damaged")


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("CON.py", "reserved on Windows"),
        ("pkg/aux", "reserved on Windows"),
        ("a:b.py", "not allowed in file names"),
        ("what?.py", "not allowed in file names"),
        ("trailing.", "ending in a dot"),
        ("dir\\file.py", "backslash"),
        ("bell\x07.py", "control or invisible character (U+0007)"),
        ("agent/\u202eyp.exe", "control or invisible character (U+202E)"),
        ("agent/greedy\u200b.py", "control or invisible character (U+200B)"),
        ("x" * 300, "longer than"),
    ],
)
def test_names_invalid_on_common_file_systems(tmp_path: Path, name: str, words: str) -> None:
    """Names Windows or macOS cannot hold are refused with what is wrong with them."""
    _refused(tmp_path, zip_of({"bot.py": GOOD_SDK_BOT, name: "x"}), words)


def test_case_insensitive_duplicates_are_refused(tmp_path: Path) -> None:
    """Bot.py and bot.py would overwrite each other on macOS and Windows: refused."""
    _refused(tmp_path, zip_of({"bot.py": "a", "Bot.py": "b"}), "ignoring case")


def test_an_archive_without_a_bot_says_what_to_add(tmp_path: Path) -> None:
    """Two top-level modules and no submission.json: the refusal names submission.json."""
    _refused(tmp_path, zip_of({"a.py": "", "b.py": ""}), "submission.json")


def test_good_archive_is_stored_read_only_under_its_hash(tmp_path: Path) -> None:
    """A good zip lands in versions/<sha256>/, read-only; caches are dropped; re-upload dedups."""
    store = SubmissionStore(tmp_path / "store")
    data = zip_of(
        {
            "agent/__init__.py": "from .program import Agent\n",
            "agent/program.py": "class Agent: ...\n",
            "agent/__pycache__/program.cpython-311.pyc": b"\0",
            "__MACOSX/agent/._program.py": b"\0",
        }
    )
    stored = store.ingest(data, LIMITS)
    assert stored.path == tmp_path / "store" / "versions" / stored.digest
    assert len(stored.digest) == 64 and stored.version == stored.digest[:12]
    assert stored.entry.name == "agent" and stored.entry.is_package
    assert _everything_under(stored.path) == {"agent", "agent/__init__.py", "agent/program.py"}
    assert stored.unpacked.files == 2 and stored.unpacked.dropped == 2
    assert not os.access(stored.path / "agent" / "program.py", os.W_OK) or os.geteuid() == 0
    assert oct((stored.path / "agent" / "program.py").stat().st_mode & 0o777) == "0o444"
    again = store.ingest(data, LIMITS)
    assert again.path == stored.path
    assert list((tmp_path / "store" / "incoming").iterdir()) == []


def test_a_helper_named_by_a_path_or_sent_under_another_name_is_refused(tmp_path: Path) -> None:
    """Defence in depth for an SDK that followed a helper link out of the bot's folder: a
    manifest naming a helper by a path, or naming one the archive holds under another name
    (the link's target's), is refused and nothing is stored."""
    bot = {"agent/__init__.py": GOOD_SDK_BOT, "lib/secret.txt": "PRIVATE"}
    by_path = zip_of(
        {**bot, "submission.json": '{"entry": "agent"}',
         "agent/submission.json": '{"helpers": ["/home/alice/lib"]}'}
    )  # fmt: skip
    _refused(tmp_path / "a", by_path, "agent/submission.json", "'/home/alice/lib'", "a path")
    renamed = zip_of({**bot, "submission.json": '{"entry": "agent", "helpers": ["utils"]}'})
    _refused(tmp_path / "b", renamed, "'utils'", "does not hold", "outside the folder")
    named = zip_of({**bot, "submission.json": '{"entry": "agent", "helpers": ["lib"]}'})
    assert SubmissionStore(tmp_path / "c").ingest(named, LIMITS).entry.name == "agent"
