"""The server settings that bound what a student may upload, with their documented defaults.

Every figure here is a server setting (``referee serve --upload-*``, see docs/submissions.md);
the defaults fit a course bot (a few hundred kilobytes of Python, perhaps a NumPy table) with a
wide margin and keep one student from filling the disk or the validation queue.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """What one upload may hold, and what one player may upload."""

    #: The archive as sent (compressed); the upload stream is cut off beyond it.
    max_archive_bytes: int = 5 * MB
    #: The archive's files once unpacked, all together.
    max_unpacked_bytes: int = 20 * MB
    #: Regular files in the archive (folders are not counted).
    max_files: int = 500
    #: Unpacked size / compressed size above which a member is treated as a compression bomb
    #: (text compresses about 4:1, a NumPy table of zeros far more, a bomb 1000:1).
    max_ratio: float = 200.0
    #: Folder depth and path length (bytes of UTF-8), kept well below every file system's limit.
    max_depth: int = 16
    max_path_bytes: int = 240
    #: Submissions per player within ``rate_window_s`` (archives refused outright count too).
    max_submissions_per_window: int = 20
    rate_window_s: float = 3600.0
    #: What one player's stored versions may take in the store, all together (unpacked).
    max_stored_bytes_per_player: int = 100 * MB


DEFAULT_LIMITS = UploadLimits()

#: ``referee serve --ladder-games-per-hour``: ladder games between submitted bots started per
#: hour (a game every two minutes: a small share of two cores).
DEFAULT_LADDER_GAMES_PER_HOUR = 30.0
