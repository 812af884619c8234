"""The conformance kit: it passes a correct bot, fails a broken one naming the docs section."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from referee.analysis.conformance import SECTIONS
from tests.languages.toolchains import REFEREE, ROOT, conformance

PYTHON_BOT = [
    sys.executable,
    "-m",
    "client_sdk",
    "--server={server}",
    "--token-file={token_file}",
    "client_sdk.examples.greedy_bot",
]


def _anchors() -> set[str]:
    text = (ROOT / "docs" / "protocol.md").read_text()
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}


def test_every_check_names_a_heading_of_the_protocol_doc() -> None:
    """Each check's section is a heading of docs/protocol.md, so a failure points somewhere."""
    assert set(SECTIONS.values()) <= _anchors()


@pytest.mark.slow
def test_the_python_sdk_bot_passes_every_check() -> None:
    """The Python SDK's greedy bot passes all seven checks."""
    report = conformance(*PYTHON_BOT)
    assert report["ok"] is True
    names = [c["name"] for c in report["checks"]]  # type: ignore[attr-defined]
    assert names == [
        "start",
        "handshake",
        "malformed message",
        "reconnect",
        "legal moves",
        "end of game",
        "refused token",
    ]


@pytest.mark.slow
def test_a_bot_that_never_connects_fails_naming_the_sections() -> None:
    """A program that exits at once fails start and refused token, each with its section."""
    report = conformance("sh", "-c", "echo broken >&2; exit 3")
    assert report["ok"] is False
    checks = {c["name"]: c for c in report["checks"]}  # type: ignore[attr-defined]
    assert checks["start"]["ok"] is False and checks["start"]["section"] == "connecting"
    assert "status 3" in checks["start"]["detail"] and "broken" in checks["start"]["detail"]
    assert checks["refused token"]["section"] == "admission"


@pytest.mark.slow
def test_a_bot_answering_the_stray_request_fails_the_malformed_check() -> None:
    """A bot that moves in a game it was never started in fails 'malformed message'."""
    report = conformance(sys.executable, str(ROOT / "tests" / "languages" / "eager_bot.py"))
    checks = {c["name"]: c for c in report["checks"]}  # type: ignore[attr-defined]
    assert checks["handshake"]["ok"] is True
    assert checks["malformed message"]["ok"] is False
    assert "no-such-game" in checks["malformed message"]["detail"]
    assert report["ok"] is False


#: Each fault of tests/languages/broken_bot.py: the check it breaks, that check's section of
#: docs/protocol.md, a piece of the failed line's detail, and the checks it keeps from running.
FAULTS = {
    "version": (
        "handshake",
        "hello-and-welcome",
        "protocol_version is 1, not 2",
        ("malformed message", "reconnect", "legal moves", "end of game"),
    ),
    "illegal": ("legal moves", "moves", "cell 0-0 is occupied", ()),
    "late": ("legal moves", "moves", "no move within 3 s", ()),
    "leave": ("end of game", "ending", "after GameOver", ()),
    "fresh": ("reconnect", "reconnecting", "resume_session_id ''", ()),
    "gone": ("reconnect", "reconnecting", "it exited with status 1", ("end of game",)),
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_broken_bot_fails_exactly_its_check(fault: str) -> None:
    """A bot with one fault fails that check naming its section; every other check is reported."""
    check, section, piece, not_checked = FAULTS[fault]
    bot = [sys.executable, str(ROOT / "tests" / "languages" / "broken_bot.py"), fault]
    done = subprocess.run(
        [*REFEREE, "conformance", "--move-time", "2", "--", *bot],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "not conformant"
    found = re.findall(r"^(PASS|FAIL|SKIP) ([a-z ]+): ", done.stdout, re.M)
    marks = {name: mark for mark, name in found}
    assert list(marks) == list(SECTIONS), done.stdout
    expected = {name: "SKIP" if name in not_checked else "PASS" for name in SECTIONS}
    expected[check] = "FAIL"
    assert marks == expected, done.stdout
    failed = next(line for line in lines if line.startswith(f"FAIL {check}: "))
    assert failed.endswith(f" [docs/protocol.md#{section}]"), failed
    assert piece in failed, failed
