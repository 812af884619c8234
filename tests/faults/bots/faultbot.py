"""A raw-protocol bot (no SDK) that misbehaves on purpose, run by the fault tests as a real
subprocess: ``python faultbot.py --server HOST:PORT --token T --fault F [--at PLY]``.

It plays random legal moves (rebuilding the position from each request) until its own move at
ply ``--at`` or later, then commits fault F:

raise      an uncaught exception (the process dies with a traceback)
segfault   reads address 0 (SIGSEGV)
exit       os._exit(3)
hang       a busy loop inside the move
sleep      sleeps forever inside the move
noterm     ignores SIGTERM, then sleeps forever inside the move
flood      thousands of (individually harmless) messages at once
oversized  a 100 KB move
huge       a 3 MB move
malformed  bytes that are not a BotMessage
drop       closes its connection and never comes back (the process lives on)
resume     closes its connection, reconnects with Hello.resume_session_id and plays on
hog        allocates memory until it is stopped
reportmem  reports a peak memory of 300 MB with an otherwise legal move
notamove   answers with Move.not_a_move (returned None, expected PlaceAction)
lastclose  plays legally; when its own move ends the game, its process exits the instant that
           move has been handed to gRPC (before any GameOver): the stream closes right after
           its last move
schedule   plays legally, but first sleeps the amounts listed in the game's ``sleeps`` label
           (comma-separated seconds, used in turn), and reports its own measured think time
"""

from __future__ import annotations

import argparse
import ctypes
import os
import queue
import random
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

import grpc

from client_sdk.proto import referee_pb2 as pb
from engine.registry import load_game

END = object()
#: Put after a move: the process exits once everything before it has been sent.
EXIT = object()
MB = 1024 * 1024


def serialize(message: Any) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


class Link:
    """One stream to the referee; messages put in ``outbox`` are sent in order."""

    def __init__(self, server: str) -> None:
        self.channel = grpc.insecure_channel(server)
        self.outbox: queue.Queue[Any] = queue.Queue()
        play = self.channel.stream_stream(
            "/tetromino.referee.v1.Referee/Play",
            request_serializer=serialize,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        self.responses = play(self._requests())

    def _requests(self) -> Iterator[Any]:
        while True:
            item = self.outbox.get()
            if item is END:
                return
            if item is EXIT:
                os._exit(0)  # gRPC asks for the next message once the previous one is sent
            yield item

    def close(self) -> None:
        self.outbox.put(END)
        self.responses.cancel()
        self.channel.close()


#: The GameInfo of every game this bot was told of (GameStart), by game id.
INFOS: dict[str, Any] = {}


def legal_move(req: Any, rng: random.Random) -> str:
    info = INFOS[req.game_id]
    game = load_game(info.game.name, **dict(info.game.params))
    state = game.state_from_string(req.position)
    return game.move_to_text(rng.choice(list(state.legal_moves)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--fault", default="none")
    parser.add_argument("--at", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(7)
    hello = pb.Hello(
        bot_name=f"fault-{args.fault}",
        bot_version="1",
        token=args.token,
        protocol_version=pb.PROTOCOL_VERSION_CURRENT,
    )
    link = Link(args.server)
    link.outbox.put(pb.BotMessage(hello=hello))
    session_id = ""
    resumed = False
    while True:
        try:
            for message in link.responses:
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    session_id = message.welcome.session_id
                elif kind == "game_start":
                    INFOS[message.game_start.game_id] = message.game_start.info
                elif kind == "move_request":
                    req = message.move_request
                    if req.ply >= args.at and args.fault != "none":
                        if args.fault == "resume" and not resumed:
                            resumed = True
                            link.close()
                            time.sleep(0.3)
                            link = Link(args.server)
                            again = pb.Hello()
                            again.CopyFrom(hello)
                            again.resume_session_id = session_id
                            link.outbox.put(pb.BotMessage(hello=again))
                            break
                        if args.fault != "resume":
                            misbehave(args.fault, link, req)
                            continue
                    move = pb.Move(game_id=req.game_id, ply=req.ply, action=legal_move(req, rng))
                    link.outbox.put(pb.BotMessage(move=move))
                elif kind == "game_over":
                    print(f"game over: {message.game_over.reason}", file=sys.stderr, flush=True)
                elif kind == "goodbye" or (kind == "error" and message.error.fatal):
                    link.close()
                    return 0
            else:
                link.close()
                return 0
        except grpc.RpcError as exc:
            print(f"stream ended: {exc.code()}", file=sys.stderr, flush=True)
            return 0


def misbehave(fault: str, link: Link, req: Any) -> None:
    game_id, ply = req.game_id, req.ply
    if fault == "lastclose":
        info = INFOS[game_id]
        game = load_game(info.game.name, **dict(info.game.params))
        state = game.state_from_string(req.position)
        move = random.Random(ply).choice(list(state.legal_moves))
        state.apply(move)
        action = game.move_to_text(move)
        link.outbox.put(pb.BotMessage(move=pb.Move(game_id=game_id, ply=ply, action=action)))
        if state.is_over():
            print(f"closing after my last move at ply {ply}", file=sys.stderr, flush=True)
            link.outbox.put(EXIT)
        return
    if fault == "schedule":
        started = time.perf_counter()
        sleeps = [float(x) for x in INFOS[game_id].labels["sleeps"].split(",")]
        time.sleep(sleeps[(ply // 2) % len(sleeps)])
        move = pb.Move(game_id=game_id, ply=ply, action=legal_move(req, random.Random(ply)))
        move.think_time_s = time.perf_counter() - started
        link.outbox.put(pb.BotMessage(move=move))
        return
    print(f"misbehaving ({fault}) at ply {ply}", file=sys.stderr, flush=True)
    if fault == "raise":
        raise RuntimeError("my evaluation blew up")
    if fault == "segfault":
        ctypes.string_at(0)
    if fault == "exit":
        os._exit(3)
    if fault == "hang":
        while True:
            pass
    if fault == "noterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if fault in ("sleep", "noterm"):
        while True:
            time.sleep(3600)
    if fault == "flood":
        for i in range(5000):
            link.outbox.put(pb.BotMessage(error=pb.Error(message=f"spam {i}")))
        return
    if fault in ("oversized", "huge"):
        size = 100_000 if fault == "oversized" else 3 * MB
        link.outbox.put(pb.BotMessage(move=pb.Move(game_id=game_id, ply=ply, action="A" * size)))
        return
    if fault == "malformed":
        link.outbox.put(b"\xff\xff\xff\xff")
        return
    if fault == "drop":
        link.close()
        while True:
            time.sleep(3600)
    if fault == "hog":
        hoard = []
        while True:
            hoard.append(b"\x01" * (20 * MB))  # filled: every page is resident
            time.sleep(0.01)
    if fault == "reportmem":
        move = pb.Move(game_id=game_id, ply=ply, action=legal_move(req, random.Random()))
        move.peak_rss_bytes = 300 * MB
        link.outbox.put(pb.BotMessage(move=move))
        return
    if fault == "notamove":
        move = pb.Move(game_id=game_id, ply=ply)
        move.not_a_move.returned = "None"
        move.not_a_move.expected = "PlaceAction"
        link.outbox.put(pb.BotMessage(move=move))
        return
    raise SystemExit(f"unknown fault {fault}")


if __name__ == "__main__":
    sys.exit(main())
