"""Shared paths and ports for the SDK tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

BOTS = Path(__file__).parent / "bots"


@pytest.fixture
def bots_dir() -> Path:
    """The folder of course-style fixture bot packages."""
    return BOTS


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port where nothing listens, for the whole test: a socket holds it bound
    without listening, so a connection is refused and no other test's server can take the
    port meanwhile (a port merely found free once can be, and then a client reaches a real
    referee)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]
