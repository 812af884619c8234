"""The platform's Prometheus metrics: one registry, owned here, and the calls that feed it.

Every process (``referee serve``, each ``referee worker``) exposes its own registry at
``/metrics`` (:mod:`referee.telemetry.endpoints`); Prometheus scrapes each and sums across
them. The rest of the referee never touches ``prometheus_client`` directly: it calls the
functions below, so names, labels and buckets are decided in one place (and listed with their
meanings in docs/operations.md).

Labels stay bounded: a game's name (a handful), a verdict or refusal reason (enums), a queue
name (a few), an isolation kind. Never a game id, a player, a bot or a token: those belong in
the logs (:mod:`referee.telemetry.logs`), where each line carries them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    gc_collector,
    generate_latest,
    platform_collector,
    process_collector,
)

from engine.adjudication.verdicts import Verdict

__all__ = [
    "CONTENT_TYPE_LATEST",
    "REGISTRY",
    "GameMeter",
    "declare_refusal_reasons",
    "exposition",
    "game_unplayed",
    "handshake_admitted",
    "handshake_refused",
    "job_finished",
    "launch_timer",
    "observe_launch",
    "observe_validation",
    "session_closed",
    "session_opened",
    "set_oldest_job_age",
    "set_queue_depth",
    "set_validation_queue",
    "set_warm_pool_size",
    "warm_launch",
]

# No ``*_created`` series: they double the output and no dashboard of ours reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]

#: The one registry every metric of this process lives in (not prometheus_client's global
#: one: nothing a library registers there by import leaks into the platform's endpoint).
REGISTRY = CollectorRegistry(auto_describe=True)
# The process's own CPU, memory and open files, and the interpreter's: free with the library.
process_collector.ProcessCollector(registry=REGISTRY)
platform_collector.PlatformCollector(registry=REGISTRY)
gc_collector.GCCollector(registry=REGISTRY)

_PREFIX = "tetromino"

GAMES_IN_FLIGHT = Gauge(
    f"{_PREFIX}_games_in_flight",
    "Games being refereed by this process now.",
    ["game"],
    registry=REGISTRY,
)
MOVES = Counter(
    f"{_PREFIX}_moves",
    "Moves accepted by the referee (rate() of it is moves per second).",
    ["game"],
    registry=REGISTRY,
)
GAMES_FINISHED = Counter(
    f"{_PREFIX}_games_finished",
    "Games ended, by verdict (normal, time, memory, illegal_move, ..., aborted).",
    ["game", "verdict"],
    registry=REGISTRY,
)
#: The referee's own time per move: from receiving a move to handing the next request to the
#: transport (bots' thinking excluded). Most moves take well under a millisecond.
MOVE_LATENCY = Histogram(
    f"{_PREFIX}_move_overhead_seconds",
    "Referee overhead per move: previous move received to next request sent.",
    ["game"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
    registry=REGISTRY,
)
#: Starting a launched bot: building its jail (code copied) and starting its process.
SANDBOX_LAUNCH = Histogram(
    f"{_PREFIX}_sandbox_launch_seconds",
    "Time to launch one bot process (jail built, code copied, process started).",
    ["isolation"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)
WARM_POOL_SIZE = Gauge(
    f"{_PREFIX}_sandbox_warm_pool_size",
    "Warm sandboxes started ahead of need and not yet given a game.",
    registry=REGISTRY,
)
WARM_LAUNCHES = Counter(
    f"{_PREFIX}_sandbox_warm_launches",
    "Sandboxed launches of SDK bots: served by a warm sandbox (hit) or started cold (miss).",
    ["result"],
    registry=REGISTRY,
)
SESSIONS = Gauge(
    f"{_PREFIX}_sessions_connected",
    "Bot sessions open on this server (admitted, not yet closed).",
    registry=REGISTRY,
)
HANDSHAKES_ADMITTED = Counter(
    f"{_PREFIX}_handshakes_admitted",
    "Handshakes that opened a session (resumed: a dropped session came back).",
    ["kind"],
    registry=REGISTRY,
)
HANDSHAKES_REFUSED = Counter(
    f"{_PREFIX}_handshakes_refused",
    "Handshakes that did not open a session, by reason (hello_timeout, unauthenticated, full,"
    " ...).",
    ["reason"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    f"{_PREFIX}_queue_depth",
    "Jobs waiting in the job queue (set by the process that looks at the queue).",
    ["queue"],
    registry=REGISTRY,
)
JOB_AGE = Gauge(
    f"{_PREFIX}_oldest_job_age_seconds",
    "Age of the oldest job still waiting in the queue (0 when it is empty).",
    ["queue"],
    registry=REGISTRY,
)
JOBS_FINISHED = Counter(
    f"{_PREFIX}_jobs_finished",
    "Jobs this process finished, by outcome (succeeded, failed, retried, ...).",
    ["queue", "outcome"],
    registry=REGISTRY,
)
VALIDATIONS_WAITING = Gauge(
    f"{_PREFIX}_validations_waiting",
    "Uploaded versions waiting for their full validation games.",
    registry=REGISTRY,
)
VALIDATIONS_RUNNING = Gauge(
    f"{_PREFIX}_validations_running",
    "Full validations running now.",
    registry=REGISTRY,
)
VALIDATION_SECONDS = Histogram(
    f"{_PREFIX}_validation_seconds",
    "Time of one validation step: the first check, the wait in the queue, the full games.",
    ["step"],
    buckets=(0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600),
    registry=REGISTRY,
)
DATABASE_UP = Gauge(
    f"{_PREFIX}_database_up",
    "1 while this process's last use of the database by a loop succeeded, 0 while it fails.",
    ["loop"],
    registry=REGISTRY,
)
DATABASE_FAILURES = Counter(
    f"{_PREFIX}_database_failures",
    "Failed uses of the database by this process's loops (unreachable, restarted, cut off).",
    ["loop"],
    registry=REGISTRY,
)


# -- games (the match runner) --------------------------------------------------------------------


class GameMeter:
    """One game's share of the metrics: in flight from creation until :meth:`finished`, its
    moves counted and their overhead observed (label children bound once, since a move is the
    referee's hot path)."""

    __slots__ = ("_done", "_game", "_latency", "_moves")

    def __init__(self, game: str) -> None:
        self._game = game
        self._moves = MOVES.labels(game)
        self._latency = MOVE_LATENCY.labels(game)
        self._done = False
        GAMES_IN_FLIGHT.labels(game).inc()

    def move(self, overhead_s: float | None) -> None:
        """One accepted move; ``overhead_s`` is the referee's own time from its arrival to the
        next request (``None`` for a game's last move, which has no next request)."""
        self._moves.inc()
        if overhead_s is not None:
            self._latency.observe(overhead_s)

    def finished(self, verdict: Verdict | str) -> None:
        """The game ended with ``verdict``: counted once, and no longer in flight."""
        if self._done:
            return
        self._done = True
        GAMES_IN_FLIGHT.labels(self._game).dec()
        GAMES_FINISHED.labels(self._game, str(verdict)).inc()


def game_unplayed(game: str, verdict: Verdict | str) -> None:
    """A game that never started (a seat did not connect) ended with ``verdict``."""
    GAMES_FINISHED.labels(game, str(verdict)).inc()


# -- the sandbox -------------------------------------------------------------------------------


def observe_launch(isolation: str, seconds: float) -> None:
    SANDBOX_LAUNCH.labels(isolation).observe(seconds)


@contextmanager
def launch_timer(isolation: str) -> Iterator[None]:
    """Time a bot's launch (only a successful one is observed: a failed launch is an error,
    counted by the verdict it leads to, and would skew the figure towards zero)."""
    started = time.perf_counter()
    yield
    observe_launch(isolation, time.perf_counter() - started)


def set_warm_pool_size(size: int) -> None:
    WARM_POOL_SIZE.set(size)


def warm_launch(hit: bool) -> None:
    """A sandboxed SDK bot was launched warm (``hit``) or cold while a pool was wanted."""
    WARM_LAUNCHES.labels("hit" if hit else "miss").inc()


# -- sessions and handshakes (the gRPC server) ---------------------------------------------------


def session_opened() -> None:
    SESSIONS.inc()


def session_closed() -> None:
    SESSIONS.dec()


def handshake_admitted(resumed: bool) -> None:
    HANDSHAKES_ADMITTED.labels("resumed" if resumed else "new").inc()


def declare_refusal_reasons(reasons: Iterable[str]) -> None:
    """Create every reason's series at zero, so a scraper sees a stable set from the start
    (``increase()`` over a series that appears at 1 misses that first refusal)."""
    for reason in reasons:
        HANDSHAKES_REFUSED.labels(reason)
    for kind in ("new", "resumed"):
        HANDSHAKES_ADMITTED.labels(kind)


def handshake_refused(reason: str) -> None:
    """``reason``: a :class:`referee.server.admission.Refusal` value (a bounded set)."""
    HANDSHAKES_REFUSED.labels(reason).inc()


# -- the job queue (workers and the process that enqueues) ------------------------------------


def set_queue_depth(queue: str, jobs: int) -> None:
    QUEUE_DEPTH.labels(queue).set(jobs)


def set_oldest_job_age(queue: str, seconds: float) -> None:
    JOB_AGE.labels(queue).set(max(0.0, seconds))


def job_finished(queue: str, outcome: str) -> None:
    """``outcome``: a short fixed word (``succeeded``, ``failed``, ``retried``, ...)."""
    JOBS_FINISHED.labels(queue, outcome).inc()


# -- the validation queue (uploads) ------------------------------------------------------------


def set_validation_queue(waiting: int, running: int) -> None:
    VALIDATIONS_WAITING.set(waiting)
    VALIDATIONS_RUNNING.set(running)


def observe_validation(step: str, seconds: float) -> None:
    """``step``: ``first_check``, ``queue_wait`` or ``full``."""
    VALIDATION_SECONDS.labels(step).observe(max(0.0, seconds))


def database_reachable(loop: str, ok: bool) -> None:
    """Whether ``loop`` (a fixed word: ``queue_poll``, ``tournaments``, ``recovery``,
    ``leases``) just reached the database."""
    DATABASE_UP.labels(loop).set(1 if ok else 0)
    if not ok:
        DATABASE_FAILURES.labels(loop).inc()


def database_down() -> list[str]:
    """The loops whose last use of the database failed (none: the database is reachable, or
    nothing has used it)."""
    return sorted(
        sample.labels["loop"]
        for metric in DATABASE_UP.collect()
        for sample in metric.samples
        if sample.value == 0
    )


def exposition() -> bytes:
    """This process's metrics in Prometheus's text format (``CONTENT_TYPE_LATEST``)."""
    return generate_latest(REGISTRY)
