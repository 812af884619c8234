"""A launched bot's output pipe: stdout and stderr read on the event loop into one bounded
capture, never into the referee's own output."""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import Literal

from referee.sandbox.stderr import BoundedCapture

__all__ = ["OutputMode", "OutputPipe"]

OutputMode = Literal["capture", "discard", "inherit"]
_READ_CHUNK = 65536


class OutputPipe:
    """The pipe a bot writes its output to, and the capture it is read into."""

    def __init__(self, limit_bytes: int) -> None:
        self.read_fd: int | None
        self.write_fd: int | None
        self.read_fd, self.write_fd = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(self.read_fd, False)
        self.capture = BoundedCapture(limit_bytes)
        self._loop: asyncio.AbstractEventLoop | None = None

    @staticmethod
    def targets(pipe: OutputPipe | None, stdout: OutputMode) -> tuple[int | None, int]:
        """The child's stdout and stderr for ``Popen`` (stderr always goes to the pipe, or
        nowhere without one; stdout as ``stdout`` says)."""
        stderr = pipe.write_fd if pipe is not None and pipe.write_fd is not None else None
        err_target = stderr if stderr is not None else subprocess.DEVNULL
        if stdout == "capture":
            return err_target, err_target
        if stdout == "discard":
            return subprocess.DEVNULL, err_target
        return None, err_target

    def started(self, loop: asyncio.AbstractEventLoop) -> None:
        """The child holds the write end now: close ours and read on ``loop``."""
        self._close_write()
        assert self.read_fd is not None
        self._loop = loop
        loop.add_reader(self.read_fd, self.on_readable)

    def abandon(self) -> None:
        """The child never started: close both ends."""
        self._close_write()
        if self.read_fd is not None:
            os.close(self.read_fd)
            self.read_fd = None

    def on_readable(self) -> None:
        fd = self.read_fd
        if fd is None:
            return
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.capture.feed(data)
        else:
            self.close()

    def drain(self) -> None:
        """Read everything already in the pipe without waiting for writers to close it."""
        while self.read_fd is not None:
            try:
                data = os.read(self.read_fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.close()
                return
            self.capture.feed(data)

    def close(self) -> None:
        """Stop reading and close the read end."""
        if self.read_fd is not None:
            if self._loop is not None:
                self._loop.remove_reader(self.read_fd)
            os.close(self.read_fd)
            self.read_fd = None

    def _close_write(self) -> None:
        if self.write_fd is not None:
            os.close(self.write_fd)
            self.write_fd = None
