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
    """The command's own function; a failure it cannot help (a path this user may not reach,
    a database locked, damaged or unreachable) ends it with one line and exit code 2."""
    try:
        code: int = args.func(args)
    except ModuleNotFoundError:
        raise
    except Exception as error:
        message = _failure_line(args, error)
        if message is None:
            raise
        return _fail(args, message)
    return code


def _failure_line(args: argparse.Namespace, error: Exception) -> str | None:
    """The one line saying why the command failed, or ``None`` for a bug (a traceback)."""
    import os

    from referee.commands._dbopen import shown
    from referee.storage.db import ENV_VAR
    from referee.storage.failures import describe

    if isinstance(error, PermissionError):
        where = f"{error.filename}: " if error.filename else ""
        return (
            f"{where}permission denied (this user may not read, write or pass through a "
            "folder on that path)"
        )
    where = getattr(args, "db", None) or os.environ.get(ENV_VAR) or "./arena.db"
    return describe(error, shown(str(where)))


def _fail(args: argparse.Namespace, message: str) -> int:
    """Say ``message`` on stderr and, under ``--json``, as one JSON object on stdout."""
    import json

    from referee.commands._dbopen import EXIT_BAD_DB

    command = " ".join(str(w) for w in (args.command, getattr(args, "action", None)) if w)
    print(f"referee {command}: {message}", file=sys.stderr)
    if getattr(args, "json", False) is True:
        print(json.dumps({"command": command, "error": message}), flush=True)
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
        # The SDK's wheel (the class server's /sdk page) is the bot author's install: it runs
        # bots and `python -m client_sdk`, not the server; the package is on no public index,
        # so the way to the server's commands is the project's source.
        missing = (error.name or "").partition(".")[0]
        if not missing or missing in _OWN_PACKAGES:
            raise
        print(
            f"referee: the Python package {missing!r} is not installed: this is the bot "
            "author's install (the SDK), which runs bots and 'python -m client_sdk' (play, "
            "submit, mine, reproduce) but not the referee; the referee's commands run where "
            "it is installed from the project's source (bash deploy/install.sh, or pip "
            "install '.[server]' in its folder)",
            file=sys.stderr,
        )
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
