"""The bot's side of ``python -m client_sdk reproduce``: ``python -m client_sdk._replay BOT``
loads the bot and hands it recorded referee messages, through the same session code that
handles them from a live referee (so the bot sees exactly what it saw in the game).

Requests on stdin, one JSON object a line: ``{"data": B64}`` (one ``RefereeMessage``'s
exact bytes) and, with ``"debug": true``, the debugger stops at the bot's first line of code
while it handles that message. Replies on stdout: ``{"ready": true}`` or ``{"load_error":
LINE}`` once, then one reply per move request, in :mod:`client_sdk._child`'s form. The
debugger talks to the terminal, not to these pipes.
"""

from __future__ import annotations

import base64
import json
import os
import pdb
import signal
import sys
import sysconfig
from pathlib import Path
from types import FrameType
from typing import IO, Any

from client_sdk._child import _load, _replies, _send
from client_sdk._loader import AgentFactory
from client_sdk._seed import apply_seed
from client_sdk._session import Session
from client_sdk.proto import referee_pb2 as pb

_SDK = Path(__file__).resolve().parent
#: Code that is not the bot's: the debugger steps through it without stopping.
_NOT_BOT = tuple(
    str(path)
    for path in (
        _SDK,
        _SDK.parent / "engine",
        *(Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "purelib")),
    )
)
_EXAMPLES = str(_SDK / "examples")


def is_bot_file(filename: str) -> bool:
    """Whether code in ``filename`` is the bot's own (where the debugger may stop)."""
    path = str(Path(filename).resolve()) if not filename.startswith("<") else filename
    if path.startswith("<") or path.startswith(_EXAMPLES):
        return not path.startswith("<")
    return not path.startswith(_NOT_BOT)


class BotDebugger(pdb.Pdb):
    """pdb that steps over the SDK and stops at the first line of the bot's own code."""

    def stop_here(self, frame: FrameType) -> bool:
        return is_bot_file(frame.f_code.co_filename) and super().stop_here(frame)


class ReplaySession(Session):
    """A session with no network: messages are handed to it; its answers go to ``out``."""

    def __init__(self, factory: AgentFactory, out: IO[str]) -> None:
        super().__init__(factory, "127.0.0.1:1", "", log=lambda line: None)
        self._out = out

    def _send(self, **kind: Any) -> None:
        answer(self._out, pb.BotMessage(**kind))

    def feed(self, message: pb.RefereeMessage, debug: bool) -> None:
        kind = message.WhichOneof("kind")
        if not debug:
            self._handle(kind, message)
            return
        debugger = _debugger()
        debugger.set_trace(sys._getframe())
        self._handle(kind, message)
        debugger.set_continue()


def answer(out: IO[str], message: pb.BotMessage) -> None:
    """A bot's move or error, as the replay's answer line on ``out`` (other messages: none);
    the in-process replay and the command bot's both answer through this."""
    if message.HasField("move"):
        move = message.move
        nam = move.not_a_move if move.HasField("not_a_move") else None
        _send(
            out,
            text=None if nam is not None else move.action,
            not_a_move=None if nam is None else nam.returned,
            expected="" if nam is None else nam.expected,
            error=None,
            think=move.think_time_s,
            peak=move.peak_rss_bytes,
        )
    elif message.HasField("error"):
        _send(out, error=message.error.message, think=0.0, peak=0)


def _debugger() -> BotDebugger:
    """A debugger on the terminal (the process's own stdin and stdout are the pipes)."""
    console = "CON" if os.name == "nt" else "/dev/tty"
    try:
        tty_in = open(console, encoding="utf-8")  # noqa: SIM115 (the debugger keeps it)
        tty_out = open(console, "w", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return BotDebugger(stdout=sys.stderr)
    return BotDebugger(stdin=tty_in, stdout=tty_out)


def serve(bot: str) -> int:
    """Load ``bot`` (seeded from ``TETROMINO_SEED``), then replay messages until stdin closes."""
    out = _replies()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    apply_seed()
    factory = _load(out, bot)
    if factory is None:
        return 2
    session = ReplaySession(factory, out)
    for line in sys.stdin:
        request = json.loads(line)
        message = pb.RefereeMessage.FromString(base64.b64decode(request["data"]))
        session.feed(message, bool(request.get("debug")))
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
