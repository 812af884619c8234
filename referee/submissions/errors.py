"""Why an upload is refused before it becomes a version; ``str(exc)`` is the student's sentence."""

from __future__ import annotations

from referee import errors


class UploadRefused(errors.Refused, ValueError):
    """The upload is refused and nothing of it is stored."""


class ArchiveRefused(UploadRefused):
    """The archive is hostile, damaged, too large, or not an archive."""


class LayoutError(UploadRefused):
    """The archive holds no recognisable bot."""


class QuotaExceeded(UploadRefused):
    """The player uploads too often or stores too much."""


class NameTaken(UploadRefused):
    """The bot name belongs to another player (or to the instructor)."""
