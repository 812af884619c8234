"""The Play stream's codec: bot messages decoded tolerantly, referee messages pre-encoded."""

from __future__ import annotations

from google.protobuf.message import DecodeError

from client_sdk.proto import referee_pb2 as pb
from referee.server.session import Malformed
from referee.server.transport import MAX_BOT_MESSAGE_BYTES


def decode(data: bytes) -> pb.BotMessage | Malformed:
    """A bot's message, or :class:`Malformed` saying why not (never raises)."""
    # A message that does not decode must become a protocol-error verdict for its bot, not an
    # aborted stream, so decoding never raises.
    if len(data) > MAX_BOT_MESSAGE_BYTES:
        return Malformed(
            len(data), f"at most {MAX_BOT_MESSAGE_BYTES} bytes are accepted", oversized=True
        )
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError as exc:
        return Malformed(len(data), str(exc))


def passthrough(data: bytes) -> bytes:
    """Sessions serialise their messages themselves (see ``BotSession.send``)."""
    return data
