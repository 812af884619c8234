"""Shared by the tests that need the real sandbox: they skip where it cannot run, except
under ``CI=true``, where they fail."""

from __future__ import annotations

import os

import pytest

from referee.sandbox.isolation import probe


def require_sandbox() -> None:
    """Fail (CI) or skip (elsewhere) when bubblewrap cannot contain a bot on this machine."""
    support = probe()
    if support.available:
        return
    message = f"the bot sandbox cannot run here: {support.reason}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: the sandbox tests must run)")
    pytest.skip(message)
