"""The SDK's self-reported memory is the bot's own, not its launcher's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from client_sdk._metrics import current_rss, peak_rss

MB = 2**20


def test_peak_is_at_least_the_current_resident_size() -> None:
    """peak_rss() never reports less than what the process holds right now."""
    ballast = bytearray(40 * MB)
    ballast[::4096] = b"x" * len(ballast[::4096])
    now = current_rss()
    assert now >= 40 * MB
    assert peak_rss() >= now
    del ballast


@pytest.mark.slow
def test_a_bot_started_by_a_large_process_does_not_report_the_launchers_memory() -> None:
    """A child launched by a process holding 300 MB reports its own small peak
    (ru_maxrss would carry the launcher's high-water mark across vfork+exec)."""
    ballast = bytearray(300 * MB)
    ballast[::4096] = b"x" * len(ballast[::4096])
    code = "import json; from client_sdk._metrics import peak_rss; print(json.dumps(peak_rss()))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    del ballast
    assert json.loads(out) < 150 * MB
