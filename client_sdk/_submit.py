"""``python -m client_sdk submit``: upload a bot's code to a referee (``mine``, which lists
your versions, games and bot output, is :mod:`client_sdk._mine`).

What is uploaded (see docs/sdk.md, "Submitting your bot"):

* ``PATH`` is a course-style or SDK package folder (with ``__init__.py``) or a single ``.py``
  module, optionally ``PATH:ClassName``;
* helper packages or modules beside it go too when named, with ``--helper NAME`` (repeatable)
  or in ``submission.json`` inside the package: ``{"helpers": ["mylib"], "class": "Agent"}``;
  one from elsewhere only when named on purpose, ``--outside-helper PATH``, and listed file by
  file (:mod:`client_sdk._packing` says what goes up);
* caches (``__pycache__``, ``*.pyc``) and VCS folders are left out;
* ``--language cpp|javascript``: ``PATH`` is the bot's source file, sent with the sources in
  that language beside it (:mod:`client_sdk._sources`); the server builds it.

The archive goes up over the ``Submissions`` gRPC service in chunks, authenticated by your token.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc

from client_sdk._connect import unreachable
from client_sdk._errors import PackError
from client_sdk._options import TokenError, add_server_options, address_of, token_of
from client_sdk._packing import Package, pack
from client_sdk._sources import foreign_project_error, pack_sources
from client_sdk._tls import TlsSetupError, handshake_failure, tls_of, tls_options

CHUNK = 256 * 1024


def channel(args: argparse.Namespace) -> grpc.Channel:
    tls = tls_of(args)
    server = address_of(args.server, tls is not None)
    if tls is not None:
        return grpc.secure_channel(server, tls.credentials())
    return grpc.insecure_channel(server)


def reason(args: argparse.Namespace, exc: grpc.RpcError) -> str:
    """Why a Submissions call failed: the referee's words, why the TLS handshake failed, that
    no referee answers at that address (the connecting command's sentence), or that this
    referee offers no Submissions service."""
    server = address_of(args.server, args.tls)
    if exc.code() == grpc.StatusCode.UNAVAILABLE:
        why = handshake_failure(tls_of(args), server) if args.tls else None
        return why or unreachable(server, args.tls, exc.code(), exc.details() or "")
    if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
        # Every call here is the Submissions service's, which a referee offers only when
        # started with --submissions; gRPC alone would say "Method not found!".
        return (
            f"the referee at {server} does not offer uploads, your games or failure packs "
            "(it was started without --submissions); ask its host, or use a pack file"
        )
    return str(exc.details() or exc.code())


def token(args: argparse.Namespace) -> str:
    """The token the options give (see :func:`client_sdk._options.token_of`)."""
    return token_of(args.token, args.token_file)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata that authenticates ``token``."""
    return (("authorization", f"Bearer {token}"),)


def upload(
    channel: grpc.Channel,
    token: str,
    data: bytes,
    *,
    name: str | None = None,
    wait: bool = True,
    first_only: bool = False,
) -> Iterator[Any]:
    """The ``Submit`` call's replies (``SubmitEvent``), uploading ``data`` in chunks."""
    from client_sdk.proto import submissions_pb2 as spb
    from client_sdk.proto import submissions_pb2_grpc

    def requests() -> Iterator[Any]:
        start = spb.SubmitStart(
            bot_name=name or "", size=len(data), no_wait=not wait, first_only=first_only
        )
        yield spb.SubmitRequest(start=start)
        for offset in range(0, len(data), CHUNK):
            yield spb.SubmitRequest(chunk=data[offset : offset + CHUNK])

    stub = submissions_pb2_grpc.SubmissionsStub(channel)
    return iter(stub.Submit(requests(), metadata=bearer(token)))


def submit_main(argv: Sequence[str]) -> int:
    parser = common_parser("submit", "Upload a bot's code; print its version and verdict.")
    parser.add_argument("path", metavar="PATH", help="package dir[:Class] or module.py[:Class]")
    parser.add_argument("--name", help="the bot's name in tables (default: <player>-<entry>)")
    parser.add_argument(
        "--helper",
        action="append",
        default=[],
        metavar="NAME",
        help="a helper package or module beside PATH to upload too (repeatable)",
    )
    parser.add_argument(
        "--outside-helper",
        action="append",
        default=[],
        metavar="PATH",
        help="a helper from outside PATH's folder, sent on purpose; its files are listed first",
    )
    parser.add_argument("--no-wait", action="store_true", help="do not wait for validation")
    parser.add_argument(
        "--first-only",
        action="store_true",
        help="return after the first check's verdict (follow the full games with `mine`)",
    )
    parser.add_argument(
        "--language",
        choices=("python", "cpp", "javascript"),
        default="python",
        help="the bot's language (default %(default)s); cpp or javascript: PATH is its "
        "source file, which the server builds",
    )
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"bot": args.name or "", "version": "", "status": "rejected"}
    try:
        secret = token(args)
        package = _pack(args)
    except (PackError, OSError, TokenError) as exc:
        return _finish(args, {**result, "reason": str(exc)}, 2)
    for note in package.notes:
        _say(args, note)
    _say(args, f"uploading {package.entry} ({package.files} files, {len(package.data)} bytes)")
    try:
        with channel(args) as chan:
            for event in upload(
                chan,
                secret,
                package.data,
                name=args.name,
                wait=not args.no_wait,
                first_only=args.first_only,
            ):
                result.update(_event(args, event))
    except TlsSetupError as exc:
        return _finish(args, {**result, "reason": str(exc)}, 2)
    except grpc.RpcError as exc:
        return _finish(args, {**result, "reason": reason(args, exc)}, 1)
    return _finish(args, result, 0 if result["status"] != "rejected" else 1)


def _pack(args: argparse.Namespace) -> Package:
    if args.language != "python":
        return pack_sources(args.path, args.language)
    wrong = foreign_project_error(Path(args.path))
    if wrong is not None:
        raise wrong
    return pack(args.path, args.helper, args.outside_helper)


def _event(args: argparse.Namespace, event: Any) -> dict[str, Any]:
    if event.WhichOneof("kind") == "stored":
        s = event.stored
        again = "" if s.new else " (this exact code was uploaded before)"
        _say(args, f"stored {s.bot}@{s.version}{again}; status {s.status}")
        return {
            "bot": s.bot,
            "version": s.version,
            "digest": s.digest,
            "status": s.status,
            "new": s.new,
            "reason": "",
        }
    if event.WhichOneof("kind") == "checked":
        return _checked(args, event.checked)
    v = event.validated
    _say(args, f"{v.status}: {v.reason}")
    if v.output.strip() and not args.json:
        print("--- your bot's output in the validation game ---", file=sys.stderr)
        print(v.output.rstrip(), file=sys.stderr)
    return {"status": v.status, "reason": v.reason, "output": v.output, "sandbox": v.sandbox}


def _checked(args: argparse.Namespace, c: Any) -> dict[str, Any]:
    """The first check's verdict; when it passed, where the full games stand."""
    if c.status == "rejected":
        _say(args, f"first check: rejected: {c.reason}")
        return {"status": c.status, "reason": c.reason, "output": c.output}
    _say(args, f"first check: {c.reason}")
    wait = f", about {c.wait_estimate_s:.0f} s" if c.HasField("wait_estimate_s") else ""
    where = f"place {c.place} in the queue{wait}" if c.place else "running now"
    follow = "`python -m client_sdk mine versions` shows it"
    tail = "" if args.first_only else "; waiting for it here (Ctrl-C is fine)"
    _say(args, f"full validation games: {where}; {follow}{tail}")
    estimate = c.wait_estimate_s if c.HasField("wait_estimate_s") else None
    return {
        "status": c.status,
        "reason": c.reason,
        "first_check": "passed",
        "place": c.place,
        "wait_estimate_s": estimate,
    }


def _say(args: argparse.Namespace, text: str) -> None:
    print(text, file=sys.stderr if args.json else sys.stdout)


def _finish(args: argparse.Namespace, result: dict[str, Any], code: int) -> int:
    if args.json:
        print(json.dumps(result))
    elif code:
        print(f"python -m client_sdk submit: {result.get('reason', '')}", file=sys.stderr)
    return code


def common_parser(command: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m client_sdk {command}", description=description
    )
    add_server_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    tls_options(parser)
    return parser
