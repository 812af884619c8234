"""deploy/'s systemd units: each one's command line is one the referee's own parser accepts
(with the EnvironmentFile's example values), and each restarts the way docs/operations.md says."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

import pytest

from referee.commands.main import build_parser

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _unit(name: str) -> configparser.ConfigParser:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    text = (DEPLOY / name).read_text(encoding="utf-8").replace("\\\n", " ")
    unit.read_string(text)
    return unit


def _example_env() -> dict[str, str]:
    lines = (DEPLOY / "referee.env.example").read_text(encoding="utf-8").splitlines()
    pairs = (line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return {key: value for key, value in pairs}


def _argv(unit: configparser.ConfigParser) -> list[str]:
    env = _example_env()
    line = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], unit["Service"]["ExecStart"])
    line = line.replace("%H", "host").replace("%i", "1")
    program, *argv = shlex.split(line)
    assert program.endswith("/referee"), program
    return argv


@pytest.mark.parametrize(
    ("name", "command", "restart"),
    [
        ("tetromino-referee.service", "serve", "on-failure"),
        # A worker whose games were handed on exits 75 by design and must come back.
        ("tetromino-worker@.service", "worker", "always"),
    ],
)
def test_unit_runs_a_command_the_referee_accepts(name: str, command: str, restart: str) -> None:
    """The unit's ExecStart parses with the referee's parser, as the named subcommand, and
    the unit restarts as documented."""
    unit = _unit(name)
    args = build_parser().parse_args(_argv(unit))
    assert args.command == command
    assert unit["Service"]["Restart"] == restart
    # systemd waits longer than the referee's own grace before it escalates to SIGKILL.
    assert float(unit["Service"]["TimeoutStopSec"]) > args.shutdown_grace


def test_the_parse_fails_on_a_misspelt_option() -> None:
    """A unit with an option the referee does not know is refused (the check can fail)."""
    unit = _unit("tetromino-worker@.service")
    unit["Service"]["ExecStart"] += " --concurency 2"
    with pytest.raises(SystemExit):
        build_parser().parse_args(_argv(unit))
