"""structlog set-up: JSON lines for machines, a readable console format for people.

Every JSON line carries ``job_id``, ``game_id``, ``seat`` and ``ply`` (``null`` when they do
not apply), so the log of one job, one game, one bot or one move can be filtered out of a busy
server's or worker's output; the console format, read by people, shows only those that apply.
The match runner binds ``game_id`` for a whole game and ``seat``/``ply`` when it logs about a
move; a worker binds ``job_id`` around each job it runs with :func:`bound_job` (every line of
that game then carries both). Both use :mod:`structlog.contextvars`, which follows each
asyncio task (a task started inside inherits the ids).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from contextlib import AbstractContextManager
from typing import Any, Literal, TextIO, cast

import structlog

LogFormat = Literal["json", "console"]

#: The context keys every JSON line carries. ``job_id`` is the job queue's id of the job a
#: worker is running (see :func:`bound_job`).
JOB_ID = "job_id"
_ALWAYS = (JOB_ID, "game_id", "seat", "ply")
_debug = False


def debug_enabled() -> bool:
    """Whether debug lines are logged: hot paths check this before building one."""
    return _debug


def _add_game_keys(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in _ALWAYS:
        event.setdefault(key, None)
    return event


def _drop_empty_game_keys(
    _: Any, __: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    for key in _ALWAYS:
        if event.get(key) is None:
            event.pop(key, None)
    return event


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the moment of writing.

    Binding the stream object at configuration time breaks when ``sys.stderr`` is replaced
    later (a test runner's capture, a daemon redirecting its output) and the old object is
    closed: a log line must never be the thing that crashes a tournament.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def configure(
    fmt: LogFormat = "console", level: str | int = "INFO", stream: TextIO | None = None
) -> None:
    """Configure structlog (and the stdlib root logger, for gRPC's own messages)."""
    if isinstance(level, str):
        level = logging.getLevelName(level.upper())
        if not isinstance(level, int):
            raise ValueError(f"unknown log level {level!r}")
    global _debug
    _debug = level <= logging.DEBUG
    out: TextIO = stream if stream is not None else cast(TextIO, _CurrentStderr())
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=out.isatty())
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_game_keys if fmt == "json" else _drop_empty_game_keys,
        structlog.processors.format_exc_info if fmt == "json" else _identity,
        renderer,
    ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=out, force=True)


def _identity(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return event


def bound_job(job_id: object) -> AbstractContextManager[None]:
    """Bind ``job_id`` to every log line of the current task (and the tasks it starts) for the
    duration of the ``with`` block: ``with bound_job(job.id): await play(job)``."""
    return structlog.contextvars.bound_contextvars(**{JOB_ID: str(job_id)})


def get_logger(name: str) -> Any:
    """A structlog logger tagged with ``component=name``."""
    return structlog.get_logger(component=name)
