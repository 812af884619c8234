"""Bounded capture of a bot's output: keeps the first and the last bytes, counts the rest."""

from __future__ import annotations

__all__ = ["BoundedCapture"]


class BoundedCapture:
    """Collects a byte stream of any length in at most ``limit_bytes`` of memory.

    The first half of the budget keeps the head of the stream (where the interpreter's startup
    errors and the bot's first messages are), the second half the tail (where the final
    traceback is). Everything in between is counted and dropped.
    """

    def __init__(self, limit_bytes: int) -> None:
        if limit_bytes < 2:
            raise ValueError("limit_bytes must be at least 2")
        self.limit_bytes = limit_bytes
        self._head_cap = limit_bytes // 2
        self._tail_cap = limit_bytes - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        """Append a chunk of the stream."""
        self.total_bytes += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self._tail_cap:
            self._tail[:] = data[-self._tail_cap :]
            return
        self._tail += data
        # Trim lazily (at twice the cap) so a stream of small writes costs amortised O(1).
        if len(self._tail) > 2 * self._tail_cap:
            del self._tail[: len(self._tail) - self._tail_cap]

    @property
    def dropped_bytes(self) -> int:
        """How many bytes of the stream are not kept."""
        return self.total_bytes - len(self._head) - min(len(self._tail), self._tail_cap)

    def tail_bytes(self, n: int) -> bytes:
        """The last ``n`` kept bytes of the stream (or fewer)."""
        kept = bytes(self._head) + bytes(self._tail[-self._tail_cap :])
        if self.dropped_bytes:
            kept = bytes(self._tail[-self._tail_cap :])
        return kept[-n:]

    def getvalue(self) -> bytes:
        """The kept bytes, with a marker line where bytes were dropped."""
        tail = bytes(self._tail[-self._tail_cap :])
        dropped = self.dropped_bytes
        if not dropped:
            return bytes(self._head) + tail
        marker = f"\n[... {dropped} bytes of output dropped ...]\n".encode()
        return bytes(self._head) + marker + tail

    def text(self) -> str:
        """The kept output as text (undecodable bytes replaced)."""
        return self.getvalue().decode("utf-8", errors="replace")
