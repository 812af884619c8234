"""Hosts apart: PostgreSQL, the server, two workers and a student each in a network namespace
of their own (deploy/netns_hosts.py), joined on a private subnet.

One set of hosts (and its PostgreSQL cluster) per pytest worker, made on first use; each test
gets a fresh database on it and its own server and worker processes, killed afterwards with
every link brought back, also after a failure. Without root the tests skip, and fail under
``CI=true``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy"))

import netns_hosts
from deployment import Deployment


@pytest.fixture(scope="session")
def hosts_net(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[netns_hosts.Hosts, netns_hosts.Postgres]]:
    """The hosts with PostgreSQL running on the database host."""
    if reason := netns_hosts.missing():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"hosts apart cannot run: {reason} (CI=true: these tests must run)")
        pytest.skip(f"hosts apart cannot run: {reason}")
    with netns_hosts.hosts_with_postgres(tmp_path_factory.mktemp("hosts")) as made:
        yield made


@pytest.fixture
def deployment(
    hosts_net: tuple[netns_hosts.Hosts, netns_hosts.Postgres], tmp_path: Path
) -> Iterator[Deployment]:
    """A fresh database on the database host; the test starts the server and workers it wants
    through it. Afterwards every process on the server, worker and student hosts is killed,
    the links are back up and PostgreSQL runs."""
    hosts, pg = hosts_net
    deployment = Deployment.fresh(hosts, pg, tmp_path)
    try:
        yield deployment
    finally:
        deployment.tear_down()
