"""A bot written against the raw protocol (no SDK), with switchable misbehaviour.

Used by the referee tests as a real subprocess:
``python rawbot.py --server HOST:PORT --token T [--behaviour B] [--at PLY] [--sleep S]``.
It rebuilds the position from every request (so it also checks that requests carry enough to
resynchronise from nothing) and plays a random legal move, unless told to misbehave from ply
``--at`` on: ``illegal``, ``garbage`` (an unreadable action), ``malformed`` (undecodable
bytes), ``empty`` (a message with nothing in it), ``sleep``, ``crash`` (os._exit), ``error``
(reports a runtime error), ``wrongid`` (moves for an unknown game, then normally).
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

import grpc

from client_sdk.proto import referee_pb2 as pb
from engine.errors import IllegalMoveError
from engine.registry import load_game

END = object()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--name", default="rawbot")
    parser.add_argument("--behaviour", default="random")
    parser.add_argument("--at", type=int, default=0, help="first ply to misbehave at")
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outbox: queue.Queue[Any] = queue.Queue()

    def requests() -> Iterator[Any]:
        while True:
            item = outbox.get()
            if item is END:
                return
            yield item

    def serialize(message: Any) -> bytes:
        return message if isinstance(message, bytes) else message.SerializeToString()

    channel = grpc.insecure_channel(args.server)
    play = channel.stream_stream(
        "/tetromino.referee.v1.Referee/Play",
        request_serializer=serialize,
        response_deserializer=pb.RefereeMessage.FromString,
    )
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                bot_name=args.name,
                bot_version="1",
                token=args.token,
                sdk_version="raw",
                protocol_version=pb.PROTOCOL_VERSION_CURRENT,
            )
        )
    )
    infos: dict[str, Any] = {}
    for message in play(requests()):
        kind = message.WhichOneof("kind")
        if kind == "game_start":
            infos[message.game_start.game_id] = message.game_start.info
        elif kind == "move_request":
            req = message.move_request
            mine = req.ply >= args.at
            if mine and args.behaviour == "sleep":
                time.sleep(args.sleep)
            if mine and args.behaviour == "crash":
                os._exit(3)
            if mine and args.behaviour == "malformed":
                outbox.put(b"\xff\xff\xff\xff")
                continue
            if mine and args.behaviour == "empty":
                outbox.put(pb.BotMessage())
                continue
            if mine and args.behaviour == "error":
                outbox.put(
                    pb.BotMessage(
                        error=pb.Error(
                            code=pb.ERROR_CODE_BOT_RUNTIME_ERROR,
                            game_id=req.game_id,
                            message="Traceback...\nZeroDivisionError: division by zero",
                        )
                    )
                )
                continue
            if mine and args.behaviour == "wrongid":
                outbox.put(pb.BotMessage(move=pb.Move(game_id="nope", ply=req.ply, action="x")))
            action = choose(req, infos[req.game_id], args.behaviour if mine else "random", rng)
            outbox.put(
                pb.BotMessage(
                    move=pb.Move(game_id=req.game_id, ply=req.ply, action=action, think_time_s=0.0)
                )
            )
        elif kind == "game_over":
            print(f"game over: {message.game_over.reason}", file=sys.stderr)
        elif kind in ("goodbye", "error") and (kind == "goodbye" or message.error.fatal):
            break
    outbox.put(END)
    channel.close()
    return 0


def choose(req: Any, info: Any, behaviour: str, rng: random.Random) -> str:
    game = load_game(info.game.name, **dict(info.game.params))
    state = game.state_from_string(req.position)
    if behaviour == "garbage":
        return "THIS IS NOT A MOVE"
    if behaviour == "illegal":
        # A move that was legal at the start but is not now (its cells or piece are taken).
        for move in game.new_state().legal_moves:
            try:
                state.check(move)
            except IllegalMoveError:
                return game.move_to_text(move)
    moves = list(state.legal_moves)
    return game.move_to_text(rng.choice(moves))


if __name__ == "__main__":
    sys.exit(main())
