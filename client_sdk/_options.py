"""What every client command shares: where the referee is, and the player's token.

* An address without a port means the referee's own default port, :data:`DEFAULT_PORT`
  (the port ``referee serve`` listens on), or 443 with TLS (a referee behind a TLS front on
  the standard HTTPS port).
* The token comes from ``--token-file FILE``, else ``--token``, else the :data:`TOKEN_ENV`
  environment variable. The file and the variable keep it off the command line, where
  ``ps`` shows it to every user of the machine.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from client_sdk._errors import SdkError

if TYPE_CHECKING:  # a launched bot's start-up parses no command line with argparse
    import argparse

#: The port ``referee serve`` listens on by default, and a plain address's port.
DEFAULT_PORT = 50051
#: A TLS address without a port: the standard HTTPS port.
DEFAULT_TLS_PORT = 443
#: The environment variable a token may come from.
TOKEN_ENV = "TETROMINO_TOKEN"

TOKEN_HELP = (
    f"prefer --token-file FILE or the {TOKEN_ENV} environment variable: a --token on the "
    "command line is visible to every user of this machine (ps)"
)


class TokenError(SdkError):
    """The token file cannot be read; the message says which and why."""


def address_of(server: str, tls: bool = False) -> str:
    """``server`` with a port: ``HOST`` becomes ``HOST:50051`` (``HOST:443`` with TLS);
    ``HOST:PORT``, ``[v6]:PORT`` and ``unix:PATH`` are kept as they are."""
    if server.startswith(("unix:", "unix-abstract:")):
        return server
    port = DEFAULT_TLS_PORT if tls else DEFAULT_PORT
    if server.startswith("["):
        closing = server.find("]")
        return server if server[closing + 1 :].startswith(":") else f"{server}:{port}"
    if server.count(":") > 1:  # a bare IPv6 address
        return f"[{server}]:{port}"
    return server if ":" in server else f"{server}:{port}"


def add_server_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--server`` and the three ways to give the token."""
    parser.add_argument(
        "--server",
        required=required,
        metavar="HOST[:PORT]",
        help=f"the referee (port {DEFAULT_PORT} when none is given; {DEFAULT_TLS_PORT} with "
        "--tls), or unix:PATH",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help=f"read your player token from FILE ({TOKEN_HELP})",
    )
    parser.add_argument(
        "--token",
        default=None,
        help=f"your player token (open servers take any); {TOKEN_HELP}",
    )


def add_connection_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """How a command reaches the referee: :func:`add_server_options` and the TLS options."""
    from client_sdk._tls import tls_options

    add_server_options(parser, required=required)
    tls_options(parser)


def login_options(args: argparse.Namespace) -> str:
    """The options a command printed for the user to run next needs to log in as this one
    did, never the token itself: the same ``--token-file``; ``--token YOUR_TOKEN`` for a token
    given on the command line; nothing when it came from the environment (read again there).
    With TLS, the same ``--tls``, ``--ca``, ``--cert`` and ``--key``."""
    import shlex

    words: list[str] = []
    if getattr(args, "token_file", None):
        words += ["--token-file", shlex.quote(args.token_file)]
    elif getattr(args, "token", None):
        words += ["--token", "YOUR_TOKEN"]
    if getattr(args, "tls", False):
        words.append("--tls")
    for option in ("ca", "cert", "key"):
        if getattr(args, option, None):
            words += [f"--{option}", shlex.quote(getattr(args, option))]
    return " ".join(words)


def token_of(token: str | None, token_file: str | None) -> str:
    """The token: from ``token_file``, else ``token``, else :data:`TOKEN_ENV` (``""``: none).
    :class:`TokenError` when the file cannot be read."""
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError as exc:
            raise TokenError(
                f"cannot read the token file {token_file}: {exc.strerror or exc}"
            ) from None
    return token or os.environ.get(TOKEN_ENV, "").strip()
