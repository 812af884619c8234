"""The thread that renders and writes log lines, and tracebacks cut to a bounded size.

Rendering a log line can be slow: a traceback (with rich's console renderer, every frame's
locals) can run to a thousand lines. A line logged on a thread that runs an event loop is
therefore only handed to this thread, which renders and writes it, so no log call (say, a
failed request an anonymous client can repeat at will) can stall the loop's other work: the
referee's clocks, its health checks, every other client. A line logged anywhere else is
rendered where it is logged (after the lines still queued, so lines keep their order).

The queue is bounded: when the writer falls behind by :data:`MAX_PENDING` lines, further lines
are counted and dropped, and a line saying how many were dropped follows.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

#: Lines waiting for the writer at most; past this they are dropped (and counted).
MAX_PENDING = 10_000
#: A traceback keeps its innermost frames up to this many lines; the rest is left out.
MAX_TRACEBACK_LINES = 60
#: ... and at most this many characters (an exception's message can be huge).
MAX_TRACEBACK_CHARS = 8_000

_STOP = object()
ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]
#: Turns a queued item into the text to write (ending in a newline), on the writer's thread.
Render = Callable[[Any], str]


def bounded_traceback(exc_info: ExcInfo) -> str:
    """The traceback of ``exc_info``, its innermost frames, cut to
    :data:`MAX_TRACEBACK_LINES` lines and :data:`MAX_TRACEBACK_CHARS` characters."""
    kind, error, tb = exc_info
    text = "".join(traceback.format_exception(kind, error, tb, limit=-MAX_TRACEBACK_LINES))
    lines = text.rstrip("\n").split("\n")
    if len(lines) > MAX_TRACEBACK_LINES:
        cut = len(lines) - MAX_TRACEBACK_LINES + 1
        lines = [lines[0], f"  ... {cut} lines left out ...", *lines[-MAX_TRACEBACK_LINES + 2 :]]
    text = "\n".join(lines)
    if len(text) > MAX_TRACEBACK_CHARS:
        half = MAX_TRACEBACK_CHARS // 2
        text = (
            f"{text[:half]}\n  ... {len(text) - 2 * half} characters left out ...\n{text[-half:]}"
        )
    return text


def on_event_loop() -> bool:
    """Whether the calling thread is running an asyncio event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LogWriter:
    """Renders and writes the lines handed to it, on its own thread when they come from an
    event loop (see the module's docstring)."""

    def __init__(self, out: TextIO, render: Render) -> None:
        self._out = out
        self._render = render
        self._queue: queue.Queue[Any] = queue.Queue(MAX_PENDING)
        self._lock = threading.Lock()
        self._dropped = 0
        self._thread: threading.Thread | None = None

    def submit(self, item: Any) -> None:
        """Render and write ``item``: later on the writer's thread when called on an event
        loop (or while earlier lines wait), else now. Never blocks an event loop."""
        if on_event_loop() or self._queue.unfinished_tasks:
            self._start()
            try:
                self._queue.put_nowait(item)
            except queue.Full:
                with self._lock:
                    self._dropped += 1
            return
        self._write(item)

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every queued line is written (at most ``timeout`` seconds)."""
        if self._thread is None:
            return
        # Queue.join has no timeout: a helper thread joins, this one waits for it as long as
        # allowed (a stream that blocks for ever must not hang the program's exit).
        waiter = threading.Thread(target=self._queue.join, daemon=True)
        waiter.start()
        waiter.join(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Write what is queued (at most ``timeout`` seconds), then end the writer's thread;
        lines submitted later are written where they are logged."""
        self.flush(timeout)
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="log-writer", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                self._queue.task_done()
                return
            try:
                self._write(item)
                with self._lock:
                    dropped, self._dropped = self._dropped, 0
                if dropped:
                    self._emit(f"[log] {dropped} log lines dropped: the log writer fell behind\n")
            finally:
                self._queue.task_done()

    def _write(self, item: Any) -> None:
        try:
            text = self._render(item)
        except Exception as error:  # a log line must never crash its writer
            text = f"[log] a log line could not be rendered: {type(error).__name__}\n"
        self._emit(text)

    def _emit(self, text: str) -> None:
        try:
            self._out.write(text)
            self._out.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stream: the line is lost, the program goes on
