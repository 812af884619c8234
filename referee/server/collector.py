"""The garbage collector settings of a serving referee (``referee serve`` applies them).

A referee holding a class of bot sessions keeps a few hundred thousand container objects alive
(gRPC's per-stream state, asyncio tasks and futures, running games), and every move allocates
a few dozen short-lived ones that wait on the network. With CPython's default thresholds
(700, 10, 10) a collection runs every few hundred moves, and whatever is alive at that moment
(a request waiting for its answer, a bot's pending read) is promoted, so full collections run
every few thousand moves. Each one walks the whole heap with the event loop stopped: measured
with 2,000 sessions, about 30% of the server's CPU time went to the collector, and each full
collection stalled every game for 0.1-0.25 s of CPU (seconds of wall time on a busy machine).
It found nothing: the per-move objects are freed by reference counting, never by the cycle
collector.

So, once the server has started:

* everything alive then (modules, classes, the protocol's descriptors: long-lived by
  construction) is moved out of the collector's sight with :func:`gc.freeze`, so no
  collection walks it again;
* the first generation is collected only after ``GEN0_THRESHOLD`` more tracked objects are
  alive than were freed (instead of 700). Objects that die young (almost all of a move's) are
  freed before a collection sees them, so few are promoted and full collections become rare.
  Cyclic garbage is still collected, a little later: at most that many objects' worth.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

#: The first generation's threshold while serving. A collection of this many young objects
#: costs a few milliseconds of CPU; at thousands of moves a second it runs every few seconds.
GEN0_THRESHOLD = 50_000


@dataclass(frozen=True, slots=True)
class CollectorSettings:
    """What :func:`tune_for_serving` did: the thresholds now in force and the frozen count."""

    threshold: tuple[int, int, int]
    frozen: int


def tune_for_serving(gen0_threshold: int = GEN0_THRESHOLD) -> CollectorSettings:
    """Freeze what is alive now and raise the first generation's threshold (see the module
    doc); ``gen0_threshold`` 0 leaves the thresholds as they are. Call it once start-up is
    done (after imports and the server's start), not per session."""
    gc.collect()  # what start-up left as garbage must not be frozen with the rest
    gc.freeze()
    if gen0_threshold > 0:
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gen0_threshold, gen1, gen2)
    return CollectorSettings(gc.get_threshold(), gc.get_freeze_count())
