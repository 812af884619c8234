"""The server's analysis budget (the depth behind the game pages' marks and the lessons) is the
operator's to set, within bounds, and a bad setting is said, not fatal."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from referee.analysis.gameeval import (
    ANALYSIS_NODES,
    NODES_ENV,
    Analyst,
    analysis_nodes,
)


def test_the_environment_sets_the_budget_of_every_new_analyst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unset, the default; ``TETROMINO_ANALYSIS_NODES=2000``, 2000 for an analyst made after;
    an analyst given its own budget keeps it."""
    monkeypatch.delenv(NODES_ENV, raising=False)
    assert analysis_nodes() == ANALYSIS_NODES
    assert Analyst(mode="off").nodes == ANALYSIS_NODES
    monkeypatch.setenv(NODES_ENV, " 2000 ")
    assert Analyst(mode="off").nodes == 2000
    assert Analyst(nodes=300, mode="off").nodes == 300


@pytest.mark.parametrize("value", ["lots", "-5", "99", "20001", "1e4", "0"])
def test_a_budget_out_of_bounds_is_logged_and_the_default_kept(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """A value that is no whole number from 100 to 20,000 leaves the default and says why."""
    monkeypatch.setenv(NODES_ENV, value)
    with capture_logs() as logs:
        assert analysis_nodes() == ANALYSIS_NODES
    [said] = [e for e in logs if e["event"] == "analysis_nodes_ignored"]
    assert said["value"] == value and "100 to 20000" in said["why"]
