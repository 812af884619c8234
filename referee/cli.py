"""The ``referee`` command: ``referee match``, ``referee serve``, and more.

Each subcommand lives in its own module under :mod:`referee.commands` and is found by
scanning that package: a module there defines ``register(subparsers)``, which adds its parser
and sets ``func`` (``args -> exit code``). Command modules keep their top-level imports light
(import heavy machinery inside the function), since every module is imported on each start.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import referee.commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee", description="Referee for tetromino board games: play, serve, rate."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(referee.commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"referee.commands.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``referee`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
