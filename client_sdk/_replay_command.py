"""A bot in any language for ``python -m client_sdk reproduce PACK -- COMMAND...``:
``python -m client_sdk._replay_command COMMAND`` (the command as one shell-quoted string)
speaks :mod:`client_sdk._replay`'s pipe protocol to the reproducer, and gRPC to the bot.

It serves the ``Referee.Play`` stream on ``127.0.0.1`` (a port the system picks), starts the
command with ``TETROMINO_SERVER`` and ``TETROMINO_TOKEN`` in its environment (and ``{server}``,
``{token}`` replaced, as the referee launches a command bot), answers its ``Hello`` with a
``Welcome``, then relays each recorded ``RefereeMessage`` to it and each of its ``Move`` or
``Error`` messages back as a reply line. The bot's own output goes to this process's stderr,
never onto the reply pipe. The debugger options (``--pdb``, ``--until``) stop nothing in a
command bot: attach the language's own debugger to its process instead.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import IO, Any

import grpc

from client_sdk._child import _replies, _send
from client_sdk._replay import answer
from client_sdk._version import PROTOCOL_VERSION
from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import referee_pb2_grpc

#: The token the bot is given (the relay checks none).
TOKEN = "replay"
#: How long the bot has to connect and say Hello.
CONNECT_TIMEOUT_S = 60.0
_END = pb.RefereeMessage(goodbye=pb.Goodbye())


class _Relay(referee_pb2_grpc.RefereeServicer):
    """One bot session: the recorded messages out, the bot's answers to ``out``."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.outgoing: queue.Queue[pb.RefereeMessage | None] = queue.Queue()
        self.hello = threading.Event()
        #: Set when the replay is over (the bot's exit after it is no crash).
        self.ending = threading.Event()

    def Play(
        self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[pb.RefereeMessage]:
        first = next(request_iterator, None)
        if first is None or not first.HasField("hello"):
            return
        threading.Thread(target=self._read, args=(request_iterator,), daemon=True).start()
        yield pb.RefereeMessage(
            welcome=pb.Welcome(session_id="replay", protocol_version=PROTOCOL_VERSION)
        )
        self.hello.set()
        while (message := self.outgoing.get()) is not None:
            yield message

    def _read(self, messages: Iterator[pb.BotMessage]) -> None:
        for message in messages:
            answer(self.out, message)


def _start(command: str, address: str) -> subprocess.Popen[bytes]:
    text = command.replace("{server}", address).replace("{token}", TOKEN)
    env = {**os.environ, "TETROMINO_SERVER": address, "TETROMINO_TOKEN": TOKEN}
    env.pop("TETROMINO_TOKEN_FILE", None)
    return subprocess.Popen(shlex.split(text), stdin=subprocess.DEVNULL, stdout=sys.stderr, env=env)


def serve(command: str) -> int:
    """Start the bot, wait for its Hello, then relay messages until stdin closes."""
    out = _replies()
    relay = _Relay(out)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    referee_pb2_grpc.add_RefereeServicer_to_server(relay, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        bot = _start(command, f"127.0.0.1:{port}")
    except (OSError, ValueError) as exc:
        _send(out, load_error=f"cannot start {command!r}: {exc}")
        return 2
    try:
        if not _connected(relay, bot):
            _send(out, load_error=_not_connected(command, bot))
            return 2
        _send(out, ready=True)
        threading.Thread(target=_exit_with, args=(bot, relay), daemon=True).start()
        for line in sys.stdin:
            request: dict[str, Any] = json.loads(line)
            message = pb.RefereeMessage.FromString(base64.b64decode(request["data"]))
            relay.outgoing.put(message)
        relay.ending.set()
        relay.outgoing.put(_END)
        relay.outgoing.put(None)
        bot.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    finally:
        if bot.poll() is None:
            bot.kill()
        bot.wait()
        server.stop(grace=None)
    return bot.returncode if bot.returncode and bot.returncode > 0 else 0


def _exit_with(bot: subprocess.Popen[bytes], relay: _Relay) -> None:
    """A bot that exits during the replay ends this process too, with its status: the
    reproducer reads that as the crash it is (not as a move that never comes)."""
    code = bot.wait()
    if not relay.ending.is_set():
        sys.stderr.flush()
        os._exit(code if code > 0 else 1)


def _connected(relay: _Relay, bot: subprocess.Popen[bytes]) -> bool:
    """Whether the bot said Hello before it exited or the time ran out."""
    waited = 0.0
    while waited < CONNECT_TIMEOUT_S:
        if relay.hello.wait(0.1):
            return True
        if bot.poll() is not None:
            return relay.hello.is_set()
        waited += 0.1
    return False


def _not_connected(command: str, bot: subprocess.Popen[bytes]) -> str:
    code = bot.poll()
    how = f"exited with status {code}" if code is not None else "is still running"
    return (
        f"{command!r} did not connect to the replay's referee within {CONNECT_TIMEOUT_S:g} s "
        f"({how}): it must connect to TETROMINO_SERVER with TETROMINO_TOKEN (or {{server}}, "
        "{token} on its command line)"
    )


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
