"""A wrong client for the conformance kit's tests: it answers every move request, even one for
a game it was never started in, with a fixed move."""

import os
import queue
from pathlib import Path

import grpc

from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import referee_pb2_grpc as pb_grpc


def main() -> None:
    """Hello, then a move for every request whatever its game."""
    token = Path(os.environ["TETROMINO_TOKEN_FILE"]).read_text().strip()
    hello = pb.Hello(bot_name="eager", token=token, protocol_version=pb.PROTOCOL_VERSION_CURRENT)
    q: queue.Queue[pb.BotMessage | None] = queue.Queue()
    q.put(pb.BotMessage(hello=hello))
    with grpc.insecure_channel(os.environ["TETROMINO_SERVER"]) as channel:
        replies = pb_grpc.RefereeStub(channel).Play(iter(q.get, None))
        for message in replies:
            if message.HasField("move_request"):
                req = message.move_request
                q.put(
                    pb.BotMessage(
                        move=pb.Move(
                            game_id=req.game_id, ply=req.ply, action="PLACE(0-0, 0-1, 0-2, 0-3)"
                        )
                    )
                )
            if message.HasField("goodbye") or message.HasField("error"):
                break
        q.put(None)


if __name__ == "__main__":
    main()
