"""Version strings the SDK announces in its hello."""

from __future__ import annotations

SDK_VERSION = "tetromino-sdk/0.1.0"
PROTOCOL_VERSION = 1
