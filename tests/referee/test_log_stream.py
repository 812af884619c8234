"""Logging follows the current standard error instead of the one it was configured with."""

from __future__ import annotations

import io
import sys

import pytest

from referee.telemetry import logs


def test_logs_survive_a_closed_stderr_replaced_after_configure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stderr closed and replaced after configure() neither crashes a log call nor loses it."""
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    logs.configure("json")
    first.close()
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    logs.get_logger("test").warning("after_the_swap", game_id=7)
    assert "after_the_swap" in second.getvalue()
