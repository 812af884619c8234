"""The client SDK that bot authors import.

Write a bot by subclassing :class:`Agent` (or with a plain function), try it locally with
:func:`client_sdk.testing.play_local`, and connect it to a referee with :func:`run` or
``python -m client_sdk --server HOST:PORT --token T BOT``. See ``docs/sdk.md``.
"""

import os

# gRPC core prints its own INFO lines (a failed TLS handshake, in OpenSSL's words) on stderr
# unless told otherwise, before any channel exists; the SDK says why a connection failed in
# one sentence of its own. Set before gRPC is first imported; a user's own setting wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from client_sdk._agent import Agent, Clocks, FunctionAgent, GameInfo, GameResult, MoveLike
from client_sdk._errors import PackError, SdkError
from client_sdk._link import Backoff, SessionError
from client_sdk._loader import BotLoadError
from client_sdk._seed import game_seed
from client_sdk._session import run
from client_sdk._think import Think
from client_sdk._tls import TlsSetupError
from client_sdk._version import PROTOCOL_VERSION, SDK_VERSION
from engine.adjudication.verdicts import Ending, Verdict
from engine.outcome import Termination

__all__ = [
    "PROTOCOL_VERSION",
    "SDK_VERSION",
    "Agent",
    "Backoff",
    "BotLoadError",
    "Clocks",
    "Ending",
    "FunctionAgent",
    "GameInfo",
    "GameResult",
    "MoveLike",
    "PackError",
    "SdkError",
    "SessionError",
    "Termination",
    "Think",
    "TlsSetupError",
    "Verdict",
    "game_seed",
    "run",
]
