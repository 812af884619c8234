"""Shared paths for the SDK tests."""

from __future__ import annotations

from pathlib import Path

import pytest

BOTS = Path(__file__).parent / "bots"


@pytest.fixture
def bots_dir() -> Path:
    """The folder of course-style fixture bot packages."""
    return BOTS
