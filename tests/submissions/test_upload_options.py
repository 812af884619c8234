"""``referee serve``'s --upload-* options set the upload limits, sizes given in MB."""

from __future__ import annotations

import argparse

from referee.commands._uploads import _upload_limits, add_upload_options
from referee.submissions.limits import DEFAULT_LIMITS, MB


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_upload_options(parser)
    return parser.parse_args(list(argv))


def test_without_options_the_limits_are_the_defaults() -> None:
    """No --upload-* option: every limit it sets is the documented default."""
    limits = _upload_limits(_parse())
    assert limits == {
        "max_archive_bytes": DEFAULT_LIMITS.max_archive_bytes,
        "max_unpacked_bytes": DEFAULT_LIMITS.max_unpacked_bytes,
        "max_files": DEFAULT_LIMITS.max_files,
        "max_submissions_per_window": DEFAULT_LIMITS.max_submissions_per_window,
        "max_stored_bytes_per_player": DEFAULT_LIMITS.max_stored_bytes_per_player,
    }


def test_each_option_sets_its_own_limit() -> None:
    """Sizes are read in MB (decimals allowed) and stored in bytes; counts as given."""
    args = _parse(
        "--upload-max-mb=0.5",
        "--upload-max-unpacked-mb=3",
        "--upload-max-files=7",
        "--upload-rate=2",
        "--upload-quota-mb=2.25",
    )
    assert _upload_limits(args) == {
        "max_archive_bytes": MB // 2,
        "max_unpacked_bytes": 3 * MB,
        "max_files": 7,
        "max_submissions_per_window": 2,
        "max_stored_bytes_per_player": int(2.25 * MB),
    }
