"""The referee's messages, read on a thread of their own.

The session answers them one at a time on the bot's thread, where the agent thinks. Reading
them apart means a ``GameOver`` reaches the bot's owner even while the agent is still thinking
about a move of that game: an agent stuck in a loop is told at once that it lost on time (the
session prints it), instead of never.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator

from client_sdk._agent import GameResult
from client_sdk.proto import referee_pb2 as pb

_END = object()


class Inbox:
    """Iterates over ``responses`` (a gRPC response stream) as they are read by a reader thread;
    ``on_game_over`` is called on that thread with each ``GameOver`` as soon as it arrives (before
    the session handles it in order). An error of the stream is raised by the iteration."""

    def __init__(
        self, responses: Iterable[pb.RefereeMessage], on_game_over: Callable[[pb.GameOver], None]
    ) -> None:
        self._items: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._on_game_over = on_game_over
        self._thread = threading.Thread(
            target=self._read, args=(responses,), name="client_sdk-inbox", daemon=True
        )
        self._thread.start()

    def _read(self, responses: Iterable[pb.RefereeMessage]) -> None:
        try:
            for message in responses:
                if message.WhichOneof("kind") == "game_over":
                    self._on_game_over(message.game_over)
                self._items.put(message)
        except BaseException as error:  # handed to the session's thread, which raises it
            # A gRPC error is the call itself: a traceback through this frame (which holds the
            # call) would be a cycle keeping the call alive until the garbage collector runs.
            error.__traceback__ = None
            self._items.put(error)
        else:
            self._items.put(_END)

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the reader to end, once the call is over or
        cancelled: it holds the call until then."""
        self._thread.join(timeout)

    def __iter__(self) -> Iterator[pb.RefereeMessage]:
        while True:
            item = self._items.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                error, item = item, None
                try:
                    raise error
                finally:
                    del error  # the traceback keeps this frame: not the error (the call) in it
            assert isinstance(item, pb.RefereeMessage)
            yield item


def over_while_thinking(result: GameResult) -> str:
    """The line saying a game ended while the bot was still thinking about its move there:
    how it ended for the bot (``lost on time`` for a time forfeit) and the referee's sentence."""
    if result.aborted:
        outcome = "was aborted"
    elif result.won:
        outcome = "was won"
    elif result.drawn:
        outcome = "was drawn"
    elif result.verdict == "time":
        outcome = "lost on time"
    else:
        outcome = f"lost ({result.verdict})"
    return (
        f"game {result.game_id} is over while the bot is still thinking about its move: it "
        f"{outcome}: {result.reason}. The move it returns will not be sent"
    )
