"""``python -m client_sdk``: the bot author's command.

``python -m client_sdk --server HOST[:PORT] BOT`` connects one bot to a referee and plays the
games it is given; the subcommands in :data:`COMMANDS` do the rest (play locally, start a
bot, upload one, list your own). Adding a subcommand is one line there.

BOT is a course-style package directory (``path/to/pkg`` or ``path/to/pkg:ClassName``), an
SDK module (``client_sdk.examples.random_bot`` or ``module:Name``) or a Python file
(``bot.py`` or ``bot.py:Name``). Everything the connecting command and the bot print goes to
stderr (only ``--help`` goes to stdout); stdin is closed for the bot.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from client_sdk._options import TokenError, add_server_options, token_of
from client_sdk._tls import TlsSetupError, tls_of, tls_options

if TYPE_CHECKING:
    import argparse

    from client_sdk._agent import GameResult
    from client_sdk._challenge import ChallengePolicy


def _isolate_stdio() -> None:
    """Send stdout to stderr (a bot's ``print`` included) and give the bot an empty stdin."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), 1)
    sys.stdout = sys.stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (lives as long as the process)


def _challenge_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--challenge",
        default="",
        metavar="OWNER/NAME",
        help="play one game against this connected bot if it accepts, then exit (1 with the "
        "reason when it declines, is not connected or does not answer); not rated unless the "
        "server rates channels",
    )
    parser.add_argument(
        "--accept-challenges",
        default=None,
        metavar="all|none|from:A,B",
        help="which challenges from other bots to accept: all, none, or only from the owners "
        "(or owner/name bots) listed (default: the bot's accept_challenge(challenger, game) "
        "decides; without one it accepts all)",
    )


#: The subcommands: name, module, its ``main(argv) -> int`` and the line ``--help`` shows.
COMMANDS: tuple[tuple[str, str, str, str], ...] = (
    ("play", "client_sdk._play", "play_main", "play a game on this machine, no server needed"),
    ("new", "client_sdk._starter", "new_main", "write a starter bot, its README and a test"),
    ("submit", "client_sdk._submit", "submit_main", "upload a bot's code to a referee"),
    ("mine", "client_sdk._mine", "mine_main", "your versions, games, records and bot output"),
    (
        "lessons",
        "client_sdk._lessons_cli",
        "lessons_main",
        "the positions your bot got wrong: from the server, or from records here",
    ),
    ("test", "client_sdk._test_cli", "test_main", "run a bot on every position of a lessons file"),
    (
        "reproduce",
        "client_sdk._reproduce_cli",
        "reproduce_main",
        "replay a failure pack against your bot here; same verdict?",
    ),
)


def _commands_help() -> str:
    width = max(len(name) for name, *_ in COMMANDS)
    lines = [f"  {name:<{width}}  {summary}" for name, _, _, summary in COMMANDS]
    return (
        "commands (python -m client_sdk COMMAND --help for each):\n"
        + "\n".join(lines)
        + "\n\nwithout a command: connect BOT to the referee at --server and play its games"
    )


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m client_sdk",
        usage="python -m client_sdk [COMMAND] ... | python -m client_sdk --server HOST BOT",
        description="Connect a bot to a tetromino referee and play the games it is given.",
        epilog=_commands_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("bot", metavar="BOT", help="package dir[:Class], module[:Name] or file.py")
    add_server_options(parser, required=False)
    parser.add_argument(
        "--check",
        action="store_true",
        help="only load the bot and find its entry point, then exit (0: it loads; 2: it does "
        "not, with the reason)",
    )
    parser.add_argument("--name", help="the bot's name (default: from the BOT argument)")
    parser.add_argument("--version", default="", dest="bot_version", help="the bot's version")
    parser.add_argument("--games", type=int, help="stop after this many games (default: all)")
    parser.add_argument(
        "--game",
        action="append",
        default=[],
        help="a game to play (repeatable; default: the server's default game, tetress)",
    )
    parser.add_argument(
        "--channel",
        default="",
        metavar="NAME",
        help="play only bots that join the same named channel (e.g. a classmate's), not the "
        "open pool; its games are not rated unless the server rates channels",
    )
    _challenge_options(parser)
    tls_options(parser)
    parser.add_argument(
        "--no-reconnect", action="store_true", help="exit instead of reconnecting on a drop"
    )
    parser.add_argument(
        "--wait-for-server",
        type=float,
        default=2.0,
        metavar="S",
        help="how long to keep trying a referee never reached yet (default %(default)g s)",
    )
    return parser


#: Every option of :func:`_parser` at its default, as its ``parse_args`` gives them.
_DEFAULTS: dict[str, Any] = {
    "server": None,
    "token_file": None,
    "token": None,
    "check": False,
    "name": None,
    "bot_version": "",
    "games": None,
    "game": [],
    "channel": "",
    "challenge": "",
    "accept_challenges": None,
    "tls": False,
    "ca": None,
    "cert": None,
    "key": None,
    "no_reconnect": False,
    "wait_for_server": 2.0,
}


def _launched(words: list[str]) -> argparse.Namespace | None:
    """The command line a referee launches a bot with (``--server=ADDRESS``, then
    ``--token-file=FILE`` or ``--token=TOKEN``, ``--``, BOT: referee.sandbox), read as
    :func:`_parser` reads it, without building the parser (which, with argparse, costs a
    launched bot more CPU before its first move than anything but its imports); ``None`` for
    any other command line. A test keeps the two readings equal."""
    if len(words) != 4 or words[2] != "--" or words[3].startswith("-"):
        return None
    found = dict(_DEFAULTS, game=[], bot=words[3])
    for word, (option, dest) in zip(
        words[:2], (("--server=", "server"), ("--token-file=", "token_file")), strict=True
    ):
        if dest == "token_file" and word.startswith("--token="):
            option, dest = "--token=", "token"
        if not word.startswith(option) or word[len(option) : len(option) + 1] in ("", "-"):
            return None  # argparse reads a value starting with "-" in ways of its own
        found[dest] = word[len(option) :]
    # The same attributes argparse.Namespace would carry; argparse itself is not imported.
    return cast("argparse.Namespace", SimpleNamespace(**found))


#: Set to 1 by the referee's load check: load the bot, say whether it loads, and exit.
LOAD_CHECK_ENV = "TETROMINO_LOAD_CHECK"


def _check(bot: str) -> int:
    """Import ``bot`` and find its entry point; one line saying why when that fails."""
    from client_sdk._loader import BotLoadError, load_bot

    try:
        load_bot(bot)
    except BotLoadError as exc:
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 2
    print(f"python -m client_sdk: {bot} loads", file=sys.stderr)
    return 0


def _policy(parser: argparse.ArgumentParser | None, text: str | None) -> ChallengePolicy | None:
    """``--accept-challenges`` parsed (``None`` when not given: the bot decides); a usage
    error naming the forms otherwise."""
    from client_sdk._challenge import ChallengePolicy

    if text is None:
        return None
    assert parser is not None  # a launch command line never gives it
    try:
        return ChallengePolicy.parse(text)
    except ValueError as exc:
        parser.error(f"--accept-challenges: {exc}")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(words)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as a Unix tool does, and keep
        # the interpreter's final flush of stdout from failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1
    except KeyboardInterrupt:
        return 130


def _main(words: list[str]) -> int:
    # Commands that talk to a person, not to a referee game: their stdout stays stdout.
    for name, module, function, _ in COMMANDS:
        if words[:1] == [name]:
            command: Callable[[list[str]], int] = getattr(import_module(module), function)
            return command(words[1:])
    # Parsed first, so that --help (and only --help) goes to stdout.
    args = _launched(words)
    parser = None
    if args is None:
        parser = _parser()
        args = parser.parse_args(words)
    _isolate_stdio()
    if args.check or os.environ.get(LOAD_CHECK_ENV) == "1":
        return _check(args.bot)
    if not args.server:
        assert parser is not None  # a launch command line always names its server
        parser.error("the following arguments are required: --server")
    try:
        token = token_of(args.token, args.token_file)
    except TokenError as exc:
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 2
    policy = _policy(parser, args.accept_challenges)
    try:
        credentials = tls_of(args)
    except TlsSetupError as exc:
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 2
    return _connect(args, token, policy, credentials)


def _connect(
    args: argparse.Namespace, token: str, policy: ChallengePolicy | None, credentials: Any
) -> int:
    from client_sdk._link import SessionError
    from client_sdk._loader import BotLoadError
    from client_sdk._session import run

    try:
        results = run(
            args.bot,
            args.server,
            token,
            name=args.name,
            version=args.bot_version,
            games=args.games,
            game_names=args.game,
            credentials=credentials,
            reconnect=not args.no_reconnect,
            wait_for_server=args.wait_for_server,
            channel=args.channel,
            challenge=args.challenge,
            accept_challenges=policy,
        )
    except BotLoadError as exc:
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 2
    except SessionError as exc:
        if exc.results:
            print(f"[client_sdk] {tally(exc.results)}", file=sys.stderr)
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 1
    print(f"[client_sdk] {tally(results)}", file=sys.stderr)
    return 0


def tally(results: Sequence[GameResult]) -> str:
    """The closing line's count: ``N game(s): W won, D drawn, L lost, A aborted`` (an aborted
    game has no result: never a loss)."""
    won, drawn, lost = (sum(getattr(r, k) for r in results) for k in ("won", "drawn", "lost"))
    aborted = sum(r.aborted for r in results)
    return f"{len(results)} game(s): {won} won, {drawn} drawn, {lost} lost, {aborted} aborted"


if __name__ == "__main__":
    sys.exit(main())
