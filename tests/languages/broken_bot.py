"""A deliberately broken client for the conformance kit's tests: a correct raw gRPC bot (random
legal moves, a reconnect with its session, status 0 after Goodbye) with the one fault named by
its argument, each breaking exactly one of the kit's checks.

``version``: its Hello speaks the previous protocol version. ``illegal``: its seventh move (the
second after the kit's drop) is on an occupied cell. ``late``: it holds its seventh move until
the kit's next message. ``leave``: it exits with status 0 at GameOver, without waiting for
Goodbye. ``fresh``: it reconnects without its session id. ``gone``: it does not reconnect.
"""

from __future__ import annotations

import os
import queue
import random
import sys
from pathlib import Path

import grpc

from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import referee_pb2_grpc as pb_grpc
from engine.tetress import Tetress, random_move

FAULTS = ("version", "illegal", "late", "leave", "fresh", "gone")
#: The move (counted from 1) the ``illegal`` and ``late`` bots get wrong.
FAULTY_MOVE = 7


class BrokenBot:
    """One bot session (over as many streams as its reconnects take) with one fault."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.session = ""
        self.games: set[str] = set()
        self.moves = 0
        self.held: list[pb.BotMessage] = []
        self.rng = random.Random(1)

    def run(self) -> int:
        """Play until Goodbye (0), a fatal Error (2) or a stream that ends without either (1)."""
        while True:
            try:
                return self.stream()
            except grpc.RpcError:
                if not self.session or self.fault == "gone":
                    raise
                if self.fault == "fresh":
                    self.session = ""

    def stream(self) -> int:
        token = Path(os.environ["TETROMINO_TOKEN_FILE"]).read_text().strip()
        version = pb.PROTOCOL_VERSION_CURRENT - (self.fault == "version")
        hello = pb.Hello(
            bot_name="broken", token=token, protocol_version=version, resume_session_id=self.session
        )
        out: queue.Queue[pb.BotMessage | None] = queue.Queue()
        out.put(pb.BotMessage(hello=hello))
        try:
            with grpc.insecure_channel(os.environ["TETROMINO_SERVER"]) as channel:
                for message in pb_grpc.RefereeStub(channel).Play(iter(out.get, None)):
                    for reply in self.answer(message):
                        out.put(reply)
                    kind = message.WhichOneof("kind")
                    if kind == "goodbye" or (kind == "game_over" and self.fault == "leave"):
                        return 0
                    if kind == "error" and message.error.fatal:
                        print(message.error.message, file=sys.stderr)
                        return 2
        finally:
            out.put(None)
        return 1

    def answer(self, message: pb.RefereeMessage) -> list[pb.BotMessage]:
        """The replies to one message (a held late move goes out with the next one)."""
        replies, self.held = self.held, []
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.session = message.welcome.session_id
        elif kind == "game_start":
            self.games.add(message.game_start.game_id)
        elif kind == "game_over":
            self.games.discard(message.game_over.game_id)
        elif kind == "move_request" and message.move_request.game_id in self.games:
            self.moves += 1
            move = pb.BotMessage(move=self.move(message.move_request))
            if self.fault == "late" and self.moves == FAULTY_MOVE:
                self.held = [move]
            else:
                replies.append(move)
        return replies

    def move(self, request: pb.MoveRequest) -> pb.Move:
        game = Tetress()
        state = game.state_from_string(request.position)
        action = game.move_to_text(random_move(state, self.rng))
        if self.fault == "illegal" and self.moves == FAULTY_MOVE:
            grid = state.grid()
            r, c = next((r, c) for r in range(11) for c in range(11) if grid[r][c] != ".")
            action = "PLACE(" + ", ".join(f"{r}-{(c + i) % 11}" for i in range(4)) + ")"
        return pb.Move(game_id=request.game_id, ply=request.ply, action=action)


if __name__ == "__main__":
    sys.exit(BrokenBot(sys.argv[1]).run())
