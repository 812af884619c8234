"""The one root of every exception the referee raises on purpose.

    RefereeError
    ├── Refused                  a request turned down on purpose; the message is for the asker
    │   │                        (raised as is by the login gate and the challenge desk)
    │   ├── server.admission.HandshakeRefused  a bot's handshake that ends without a session
    │   ├── server.auth.AuthError         an unknown or missing token (or a throttled try)
    │   ├── storage.players.TokenRejected a token that opens nothing
    │   └── submissions.errors.UploadRefused  an upload refused (archive, layout, quota, name)
    ├── storage.errors.StorageError       storage's own (not found, conflict, duplicate game ...)
    ├── bad input, also ``ValueError``: server.bounds.BadField, submissions.names.BadName,
    │   storage.tokens.TokenFormatError and WrongTokenKey, sandbox.isolation.SandboxUnavailable,
    │   match.thinking.ThinkOutOfBounds, storage.botnames.AmbiguousName,
    │   commands.classroster.RosterError
    ├── tools.sdkwheel.WheelError          the SDK's wheel cannot be built or found
    ├── sandbox.warmbox.NotServable       a warm sandbox this bot cannot take (it starts cold)
    ├── storage.secret.TokenKeyError      the server's token key is unusable
    ├── match.seat.SessionClosed          writing to a bot whose stream has ended
    ├── play.local.BotDidNotConnect       a launched bot that never opened its session
    ├── play.store.AbortedNotKept         an aborted game not stored: its uid is played again
    ├── workers.job.LeaseLost, GameFailed a worker's job handed on, or an attempt to retry
    ├── web.security.BodyTooLarge         a request body over its limit
    ├── submissions.build: BuildFailed, BuildUnavailable  an upload that did not build; a
    │   language this server cannot build (BuildCrashed: its build machinery failed twice)
    └── commands: DatabaseUnavailable, RemoteAbsent

Each keeps its module and name (and its builtin base, such as ``ValueError``, where callers
catch that), so a caller catches exactly what it expects, and ``except RefereeError`` catches
everything the referee meant to raise. The course-compatible ``referee.game`` keeps the
course's own exceptions. Imports nothing: every layer of the referee may raise these.
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base class of every exception the referee raises on purpose."""


class Refused(RefereeError):
    """A request turned down on purpose; ``message`` (also ``str()``) is the sentence for
    whoever asked. ``retry_after_s`` above 0: the request was turned down unexamined (a throttle
    or a busy server) and the same one may succeed after that many seconds."""

    def __init__(self, message: str, retry_after_s: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_s = retry_after_s


__all__ = ["RefereeError", "Refused"]
