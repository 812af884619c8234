"""Option groups of ``referee serve``: TLS and challenges (kept apart to keep serve.py short)."""

from __future__ import annotations

import argparse
from typing import Any


def add_challenge_options(parser: argparse.ArgumentParser) -> None:
    """Challenges (python -m client_sdk --challenge OWNER/NAME): how long one waits for the
    other side, and how many one player may have open."""
    from referee.hosting.challenges import DEFAULT_ANSWER_S, DEFAULT_MAX_CHALLENGES

    parser.add_argument(
        "--challenge-wait",
        type=_positive,
        default=DEFAULT_ANSWER_S,
        metavar="SECONDS",
        help="how long a challenge waits for the challenged bot to be free, and then for its "
        "answer, before the challenger is told no (default %(default)g s)",
    )
    parser.add_argument(
        "--max-challenges",
        type=_at_least_one,
        default=DEFAULT_MAX_CHALLENGES,
        metavar="N",
        help="open challenges one player may have at once; more are refused at once with a "
        "sentence saying so (default %(default)s)",
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds above 0")
    return value


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give a whole number of at least 1")
    return value


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    """``--tls-cert``, ``--tls-key`` and ``--tls-client-ca`` (mutual TLS)."""
    parser.add_argument("--tls-cert", metavar="FILE", help="PEM certificate chain for TLS")
    parser.add_argument("--tls-key", metavar="FILE", help="PEM private key for TLS")
    parser.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="mutual TLS: accept only clients whose certificate this CA (PEM) signed",
    )


def tls_files(args: argparse.Namespace) -> Any:
    """The listener's TLS files, read once now so a bad file stops ``serve`` before it
    listens (``None``: plain text)."""
    from referee.server.app import TlsFiles

    if bool(args.tls_cert) != bool(args.tls_key):
        raise ValueError("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
    if not args.tls_cert:
        return None
    tls = TlsFiles(args.tls_cert, args.tls_key, args.tls_client_ca)
    tls.credentials()
    return tls
