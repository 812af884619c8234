"""Every ``referee`` command's help renders: a stray ``%`` in a help text made ``referee
--help`` crash with a TypeError."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

import pytest

from referee.commands.main import build_parser, main


def _parsers(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def test_every_command_and_subcommand_help_renders() -> None:
    """The help of ``referee`` and of each (sub)command formats, naming its commands."""
    rendered = {path: parser.format_help() for path, parser in _parsers(build_parser(), "referee")}
    assert len(rendered) > 30
    top = " ".join(rendered["referee"].split())
    assert "grade" in top and "(95% confidence)" in top
    assert all("usage:" in text for text in rendered.values())


def test_top_level_help_exits_cleanly() -> None:
    """``referee --help`` prints the command list and exits with status 0."""
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    else:
        raise AssertionError("--help did not exit")


@pytest.mark.slow
def test_building_the_parser_leaves_the_heavy_machinery_unimported() -> None:
    """Every ``referee`` command builds the whole parser first; doing so imports neither the
    gRPC server, the database layer, the hosting floor, nor networkx and numpy (each command
    imports what it runs), which once cost every command about 0.1 s of start-up."""
    heavy = ["referee.server.admission", "referee.hosting", "sqlalchemy", "networkx", "numpy"]
    probe = (
        "import sys; from referee.commands.main import build_parser; build_parser(); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
