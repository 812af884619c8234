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

import atexit
import logging
import sys
from collections.abc import MutableMapping
from contextlib import AbstractContextManager
from typing import Any, Literal, TextIO, cast

import structlog

from referee.telemetry.logwriter import LogWriter, bounded_traceback

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
    """Configure structlog (and the stdlib root logger, for gRPC's own messages).

    Lines logged on an event loop are rendered and written by a thread of their own
    (:mod:`referee.telemetry.logwriter`), with tracebacks cut to a bounded size, in either
    format: a log line cannot stall the loop.
    """
    if isinstance(level, str):
        level = logging.getLevelName(level.upper())
        if not isinstance(level, int):
            raise ValueError(f"unknown log level {level!r}")
    global _debug, _writer
    _debug = level <= logging.DEBUG
    out: TextIO = stream if stream is not None else cast(TextIO, _CurrentStderr())
    if _writer is not None:
        _writer.close(FLUSH_TIMEOUT_S)  # the lines of the previous set-up go first
    _writer = LogWriter(out, _Renderer(fmt, out.isatty()))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _add_game_keys if fmt == "json" else _drop_empty_game_keys,
            _capture_exc_info,
            _hand_over,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=_WriterLogger,
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    root.addHandler(_RecordHandler(_writer))
    root.setLevel(max(level, logging.WARNING))


#: How long :func:`flush` (at exit, or when logging is configured again) waits for the writer.
FLUSH_TIMEOUT_S = 5.0
_writer: LogWriter | None = None


def flush() -> None:
    """Wait until every line logged so far is written (the writer thread renders lines logged
    on an event loop a moment later)."""
    if _writer is not None:
        _writer.flush(FLUSH_TIMEOUT_S)


atexit.register(flush)


def _capture_exc_info(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """``exc_info=True`` (``log.exception``) made the exception itself: the writer's thread,
    where the line is rendered, is not handling it."""
    exc = event.get("exc_info")
    if isinstance(exc, BaseException):
        event["exc_info"] = (type(exc), exc, exc.__traceback__)
    elif exc and not isinstance(exc, tuple):
        info = sys.exc_info()
        if info[1] is None:
            event.pop("exc_info")
        else:
            event["exc_info"] = info
    return event


def _hand_over(
    _: Any, __: str, event: MutableMapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (event,), {}


class _WriterLogger:
    """structlog's logger: every level hands the event to the writer, which renders it."""

    def __init__(self, *_: Any) -> None:
        pass

    def msg(self, event: MutableMapping[str, Any]) -> None:
        if _writer is not None:
            _writer.submit(event)

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


class _Renderer:
    """Renders a queued item: a structlog event, or a stdlib record (gRPC's, asyncio's)."""

    def __init__(self, fmt: LogFormat, colors: bool) -> None:
        self._tail: list[Any]
        if fmt == "json":
            self._tail = [_json_exception, structlog.processors.JSONRenderer()]
        else:
            console = structlog.dev.ConsoleRenderer(
                colors=colors, exception_formatter=_console_exception
            )
            self._tail = [console]
        self._records = _BoundedFormatter("%(levelname)s:%(name)s:%(message)s")

    def __call__(self, item: Any) -> str:
        if isinstance(item, logging.LogRecord):
            return self._records.format(item) + "\n"
        value: Any = item
        for processor in self._tail:
            value = processor(None, "msg", value)
        return str(value) + "\n"


_json_exception = structlog.processors.ExceptionRenderer(bounded_traceback)


def _console_exception(sio: TextIO, exc_info: Any) -> None:
    sio.write("\n" + bounded_traceback(exc_info))


class _BoundedFormatter(logging.Formatter):
    def formatException(self, ei: Any) -> str:  # logging's name for it
        return bounded_traceback(ei)


class _RecordHandler(logging.Handler):
    """The stdlib root logger's handler: records go to the same writer as structlog's lines
    (its message is made here, its traceback on the writer's thread)."""

    def __init__(self, writer: LogWriter) -> None:
        super().__init__()
        self._writer = writer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            record.msg, record.args = record.getMessage(), None
        except Exception:  # a bad format string must not crash the caller
            record.msg, record.args = f"(unrenderable log message {record.msg!r:.200})", None
        self._writer.submit(record)


def bound_job(job_id: object) -> AbstractContextManager[None]:
    """Bind ``job_id`` to every log line of the current task (and the tasks it starts) for the
    duration of the ``with`` block: ``with bound_job(job.id): await play(job)``."""
    return structlog.contextvars.bound_contextvars(**{JOB_ID: str(job_id)})


def get_logger(name: str) -> Any:
    """A structlog logger tagged with ``component=name``."""
    return structlog.get_logger(component=name)
