"""The one root of every exception the SDK raises.

    SdkError
    ├── SessionError          the referee refused the session or could not be reached
    │   └── ChallengeRefused  a challenge the other bot or the referee turned down
    ├── TurnedAway            a handshake turned away for a reason that may pass (busy, full)
    ├── Dropped               the stream ended without the referee saying goodbye
    ├── BotLoadError          the BOT argument names nothing that can play
    ├── PackError             a bot that cannot be packed for upload (also ``ValueError``)
    ├── TokenError            no token given, or a token file that cannot be read
    ├── BotStartError         a local bot process (``play``) that did not start
    ├── FailurePackError      a failure pack that cannot be read (also ``ValueError``)
    ├── CannotReplay          a recorded game `reproduce` cannot replay with this bot
    ├── LessonsFailed         lessons that cannot be made or fetched (``lessons``)
    └── TlsSetupError         a certificate, key or CA file that cannot be used

``except client_sdk.SdkError`` catches everything the SDK meant to raise; a bug in the bot
itself passes through as it is.
"""

from __future__ import annotations


class SdkError(Exception):
    """Base class of every exception the SDK raises on purpose."""


class PackError(SdkError, ValueError):
    """The bot cannot be packed; the message says why (``python -m client_sdk submit``)."""
