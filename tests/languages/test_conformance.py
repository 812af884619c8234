"""The conformance kit: it passes a correct bot, fails a broken one naming the docs section."""

from __future__ import annotations

import re
import sys

import pytest

from referee.analysis.conformance import SECTIONS
from tests.languages.toolchains import ROOT, conformance

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
