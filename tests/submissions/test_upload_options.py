"""``referee serve``'s --upload-* options set the upload limits, sizes given in MB."""

from __future__ import annotations

import dataclasses

from referee.commands._serve_config import serve_config
from referee.commands.main import build_parser
from referee.submissions.limits import DEFAULT_LIMITS, MB, UploadLimits


def _limits(*argv: str) -> UploadLimits:
    """The upload limits ``referee serve`` reads from ``argv``."""
    return serve_config(build_parser().parse_args(["serve", *argv])).uploads.limits


def test_without_options_the_limits_are_the_defaults() -> None:
    """No --upload-* option: every limit it sets is the documented default."""
    assert _limits() == DEFAULT_LIMITS


def test_each_option_sets_its_own_limit() -> None:
    """Sizes are read in MB (decimals allowed) and stored in bytes; counts as given."""
    limits = _limits(
        "--upload-max-mb=0.5",
        "--upload-max-unpacked-mb=3",
        "--upload-max-files=7",
        "--upload-rate=2",
        "--upload-quota-mb=2.25",
    )
    assert limits == dataclasses.replace(
        DEFAULT_LIMITS,
        max_archive_bytes=MB // 2,
        max_unpacked_bytes=3 * MB,
        max_files=7,
        max_submissions_per_window=2,
        max_stored_bytes_per_player=int(2.25 * MB),
    )
