"""Staging a command bot's code for the sandbox never trips over a word that is not a path."""

from __future__ import annotations

from pathlib import Path

from referee.sandbox.botcode import stage_code


def test_a_word_too_long_to_be_a_path_is_left_alone(tmp_path: Path) -> None:
    """A command word longer than a file name may be (ENAMETOOLONG) is kept as it is, not a
    crash of the launcher."""
    long_word = "VAR=" + "x," * 3000
    staged = stage_code("command", f"env {long_word} true", tmp_path)
    assert long_word in staged.value
