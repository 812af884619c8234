"""The validation queue's rule, as pure functions: who is validated next, and how long a wait.

* **One validation at a time per team**: a team whose full validation games are running is
  not served again until they end.
* **A newer upload replaces the team's own waiting one** (:func:`admit`): a team has at most
  one version waiting; the one it replaces is never validated (its author uploaded past it).
* **Teams are served in order of their oldest waiting upload** (:func:`order`): the waiting
  version's upload time, ties by submission id. A team that uploads again goes behind the
  teams already waiting, so uploading often never jumps the queue.

The wait estimate (:func:`estimate_s`) is computed from measured validation times: the
median of the recent ones, times the validations ahead of the version, over the slots.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Waiting:
    """One version waiting for its full validation games: its team (the uploader), its
    submission id and its upload time (seconds, any epoch shared by the queue)."""

    team: str
    submission_id: int
    uploaded_at: float


def admit(waiting: Sequence[Waiting], new: Waiting) -> tuple[list[Waiting], Waiting | None]:
    """The queue with ``new`` in it and the team's waiting version it replaced (or None)."""
    replaced = next((w for w in waiting if w.team == new.team), None)
    kept = [w for w in waiting if w.team != new.team]
    kept.append(new)
    return kept, replaced


def order(waiting: Sequence[Waiting], running: Collection[str] = ()) -> list[Waiting]:
    """The waiting versions in the order they will be served: teams with nothing running by
    their waiting upload's time (then id); teams whose validation runs after them, in the
    same order (they are served once theirs ends, and nobody waiting is passed by them)."""
    key = sorted(waiting, key=lambda w: (w.uploaded_at, w.submission_id))
    return [w for w in key if w.team not in running] + [w for w in key if w.team in running]


def next_up(waiting: Sequence[Waiting], running: Collection[str]) -> Waiting | None:
    """The version to validate now (``None``: every waiting team already has one running)."""
    ready = [w for w in order(waiting, running) if w.team not in running]
    return ready[0] if ready else None


def place_of(waiting: Sequence[Waiting], running: Collection[str], submission_id: int) -> int:
    """The version's place in the queue (1: next), or 0 when it is not waiting."""
    for place, w in enumerate(order(waiting, running), start=1):
        if w.submission_id == submission_id:
            return place
    return 0


def estimate_s(place: int, durations: Sequence[float], slots: int, running: int) -> float | None:
    """Seconds until the version at ``place`` starts: the median measured validation time
    per round of ``slots`` validations, counting the ``running`` ones as half done (``None``
    until one validation was measured)."""
    if not durations:
        return None
    if place <= 0:
        return 0.0
    return statistics.median(durations) * (place - 1 + running / 2) / max(1, slots)
