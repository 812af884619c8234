"""The garbage collector settings ``referee serve`` applies once started."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from referee.server.collector import GEN0_THRESHOLD, tune_for_serving


@pytest.fixture
def restored_collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_tuning_freezes_what_is_alive_and_raises_the_first_threshold(
    restored_collector: None,
) -> None:
    """Start-up objects leave the collector's sight; only the first threshold changes."""
    _, gen1, gen2 = gc.get_threshold()
    alive = _Node()
    settings = tune_for_serving()
    # Frozen objects other threads free meanwhile leave the count, so it may only fall.
    assert settings.frozen > 1000 and 0 < gc.get_freeze_count() <= settings.frozen
    assert not any(o is alive for o in gc.get_objects())
    assert gc.get_threshold() == settings.threshold == (GEN0_THRESHOLD, gen1, gen2)


def test_cycles_made_after_tuning_are_still_collected_automatically(
    restored_collector: None,
) -> None:
    """A reference cycle dropped while serving is freed by an automatic collection once
    enough objects are alive, with no explicit gc.collect()."""
    tune_for_serving(gen0_threshold=2_000)
    first, second = _Node(), _Node()
    first.other, second.other = second, first
    watch = weakref.ref(first)
    del first, second
    assert watch() is not None  # a cycle: reference counting alone does not free it
    kept = [[] for _ in range(3 * 2_000)]  # past the threshold: a collection runs
    assert watch() is None
    del kept


def test_zero_threshold_leaves_the_thresholds_alone(restored_collector: None) -> None:
    """gen0_threshold=0 only freezes."""
    before = gc.get_threshold()
    assert tune_for_serving(gen0_threshold=0).threshold == before
