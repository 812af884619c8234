"""Version strings the SDK announces in its hello."""

from __future__ import annotations

from client_sdk.proto import referee_pb2 as _pb

SDK_VERSION = "tetromino-sdk/0.1.0"
#: The protocol version, as the protocol file defines it (``ProtocolVersion``); the referee
#: uses the same constant.
PROTOCOL_VERSION: int = _pb.PROTOCOL_VERSION_CURRENT
