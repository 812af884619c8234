"""What several bench scripts share: scripted games for the bench bots, the messages a bench
bot reads, and the last line a script prints with ``--json``.

The scripts run as ``python bench/NAME.py`` with the checkout's root on ``sys.path``, so they
import this module as ``bench.common``.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any


def random_scripts(count: int, seed: int) -> list[list[str]]:
    """``count`` complete Tetress games of uniform random moves, each as its moves' texts."""
    from engine.registry import load_game

    game = load_game("tetress")
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        state = game.new_state()
        moves = []
        while state.outcome() is None:
            move = rng.choice(list(state.legal_moves))
            moves.append(game.move_to_text(move))
            state.apply(move)
        out.append(moves)
    return out


async def referee_messages(call: Any) -> AsyncIterator[tuple[str, Any]]:
    """Each message the referee sends on a raw Play stream, with its kind, until the stream ends.

    ``call`` is a ``grpc.aio`` stream-stream call made without deserializers (bytes in, bytes
    out), as the bench bots make them to spend as little CPU as they can.
    """
    import grpc

    from client_sdk.proto import referee_pb2 as pb

    while True:
        data = await call.read()
        if data is grpc.aio.EOF:
            return
        message = pb.RefereeMessage.FromString(data)
        yield message.WhichOneof("kind"), message


def finish(figures: dict[str, Any], as_json: bool) -> int:
    """A script's end: with ``--json``, ``figures`` as one JSON object on the last line; exit 0."""
    if as_json:
        print(json.dumps(figures), flush=True)
    return 0
