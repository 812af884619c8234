"""The client SDK that bot authors import.

Write a bot by subclassing :class:`Agent` (or with a plain function), try it locally with
:func:`client_sdk.testing.play_local`, and connect it to a referee with :func:`run` or
``python -m client_sdk --server HOST:PORT --token T BOT``. See ``docs/sdk.md``.
"""

import gc
import os
import sys

# gRPC core prints its own INFO lines (a failed TLS handshake, in OpenSSL's words) on stderr
# unless told otherwise, before any channel exists; the SDK says why a connection failed in
# one sentence of its own. Set before gRPC is first imported; a user's own setting wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

# Run as a program (``python -m client_sdk``: a launched bot, the SDK's commands, a warm
# sandbox; while -m locates its module, sys.argv[0] is "-m"), the process first imports gRPC
# with asyncio, protobuf and the SDK: tens of thousands of objects that live as long as it does,
# and next to no garbage. The cyclic collector, run every few hundred new objects, would scan
# them again and again while they load (up to a bot's import: 59 young and 5 older collections,
# 18 and 1 without these imports' share), and on every full collection of the game after. So it
# is paused while they load, and they are then frozen (never scanned again) before it resumes
# and any bot code runs. Imported as a library (the referee, tests, a user's script), the SDK
# leaves the collector alone.
_startup = sys.argv[:1] == ["-m"] and gc.isenabled()
if _startup:
    gc.disable()
try:
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
finally:
    if _startup:
        gc.freeze()
        gc.enable()

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
