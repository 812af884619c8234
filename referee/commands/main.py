"""The ``referee`` command: ``referee match``, ``referee serve``, and more.

Each subcommand lives in its own module under :mod:`referee.commands` and is found by
scanning that package: a module there defines ``register(subparsers)``, which adds its parser
and sets ``func`` (``args -> exit code``). Command modules keep their top-level imports light
(import heavy machinery inside the function), since every module is imported on each start.
"""

from __future__ import annotations

import argparse
import difflib
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


def subcommand_names(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The names of the ``referee`` commands (``match``, ``serve``...)."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return frozenset(actions[0].choices) if actions else frozenset()


def _subparser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The (sub)subcommand's own parser, for its usage line and option names."""
    current = parser
    for dest in ("command", "action"):
        chosen = getattr(args, dest, None)
        actions = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not chosen or not actions or chosen not in actions[0].choices:
            break
        current = actions[0].choices[chosen]
    return current


def _reject_unknown(parser: argparse.ArgumentParser, extras: list[str]) -> None:
    """Exit with the subcommand's usage and, when one is close, the option meant."""
    options = [o for a in parser._actions for o in a.option_strings]
    first = extras[0]
    close = difflib.get_close_matches(first.split("=", 1)[0], options, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    parser.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


#: Our own packages; a missing module outside them is a dependency the install left out.
_OWN_PACKAGES = frozenset({"engine", "referee", "client_sdk"})


def _run(args: argparse.Namespace) -> int:
    """The command's own function; a database that fails under it (locked, damaged,
    unreachable) ends it with one line and exit code 2."""
    try:
        code: int = args.func(args)
    except ModuleNotFoundError:
        raise
    except Exception as error:
        return _database_failure(args, error)
    return code


def _database_failure(args: argparse.Namespace, error: Exception) -> int:
    """Exit code 2 and one line when ``error`` is a database failure; else re-raise it."""
    import os

    from referee.commands._dbopen import EXIT_BAD_DB, shown
    from referee.storage.db import ENV_VAR
    from referee.storage.failures import describe

    where = getattr(args, "db", None) or os.environ.get(ENV_VAR) or "./arena.db"
    message = describe(error, shown(str(where)))
    if message is None:
        raise error
    command = " ".join(str(w) for w in (args.command, getattr(args, "action", None)) if w)
    print(f"referee {command}: {message}", file=sys.stderr)
    return EXIT_BAD_DB


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``referee`` console script."""
    try:
        parser = build_parser()
        words = list(sys.argv[1:] if argv is None else argv)
        if words[:1] == ["match"]:
            from referee.commands.match import course_argv

            words = course_argv(words)
        args, extras = parser.parse_known_args(words)
        if extras:
            _reject_unknown(_subparser(parser, args), extras)
        from referee.telemetry import logs

        # Commands with a --log-level reconfigure; the others log warnings only.
        logs.configure("console", "WARNING")
        try:
            code = _run(args)
        finally:
            logs.flush()  # lines a command logged on its event loop are written by now
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as error:
        # A bare `pip install tetromino-arena` is the bot author's install: say what is missing.
        missing = (error.name or "").partition(".")[0]
        if not missing or missing in _OWN_PACKAGES:
            raise
        print(
            f"referee: the Python package {missing!r} is not installed; the referee server and "
            "its commands need the server extra: pip install 'tetromino-arena[server]'",
            file=sys.stderr,
        )
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
