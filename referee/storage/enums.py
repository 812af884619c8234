"""The storage layer's domain vocabulary: statuses, kinds, formats and policies.

These are the values callers pass to and get back from :class:`~referee.storage.Repository`;
the ORM (:mod:`referee.storage.models`) stores them as short strings guarded by CHECK
constraints built from these same enums, so each value is defined once.
"""

from __future__ import annotations

import enum


class PlayerKind(enum.StrEnum):
    PLAYER = "player"
    TEAM = "team"


class SourceKind(enum.StrEnum):
    """Where a bot version's code comes from."""

    PACKAGE = "package"
    """A course-style package directory the referee launches."""
    SDK_MODULE = "sdk_module"
    """A Python module written against the client SDK, launched by the referee."""
    COMMAND = "command"
    """A shell command the referee launches."""
    REMOTE = "remote"
    """A bot that connects to the referee from elsewhere with a token."""


class TournamentFormat(enum.StrEnum):
    ROUND_ROBIN = "round_robin"
    SWISS = "swiss"
    GAUNTLET = "gauntlet"
    LADDER = "ladder"
    ADAPTIVE = "adaptive"


class TournamentStatus(enum.StrEnum):
    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class ForfeitPolicy(enum.StrEnum):
    """What a time, memory, illegal-move or crash forfeit does to the game's result."""

    LOSS = "loss"
    """The offender loses; the game is rated."""
    VOID = "void"
    """The game is kept with its verdict but left out of results and ratings."""


class PairingStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    VOID = "void"


class MemoryMeasure(enum.StrEnum):
    """How a seat's peak memory was obtained."""

    RSS_POLL = "rss_poll"
    CGROUP = "cgroup"
    RLIMIT = "rlimit"
    SELF_REPORTED = "self_reported"
    UNKNOWN = "unknown"


class SubmissionStatus(enum.StrEnum):
    """Where an uploaded version stands; only ``accepted`` versions play."""

    VALIDATING = "validating"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Role(enum.StrEnum):
    """What a token lets its holder do; each role includes the ones below it.

    ``student`` plays, submits and sees their own private data; ``instructor`` also creates
    and runs tournaments and sees every player's private data; ``admin`` (the operator) also
    sees the admin views. Callers with no token see the public data only (no role).
    """

    STUDENT = "student"
    INSTRUCTOR = "instructor"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _ROLE_RANK[self]

    def allows(self, needed: Role) -> bool:
        """Whether this role may do what ``needed`` may (admin > instructor > student)."""
        return self.rank >= needed.rank


_ROLE_RANK = {Role.STUDENT: 1, Role.INSTRUCTOR: 2, Role.ADMIN: 3}


class GameKind(enum.StrEnum):
    """Why a game was played: only ``rated`` games count in tables and ladders, and only they
    are public; a ``validation`` game (a new upload against the reference bot) is its owner's
    and the instructor's to read."""

    RATED = "rated"
    VALIDATION = "validation"
