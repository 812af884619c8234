"""``python -m client_sdk submit``: upload a bot's code to a referee (``mine``, which lists
your versions, games and bot output, is :mod:`client_sdk._mine`).

What is uploaded (see docs/sdk.md, "Submitting your bot"):

* ``PATH`` is a course-style or SDK package folder (with ``__init__.py``) or a single ``.py``
  module, optionally ``PATH:ClassName``;
* helper packages or modules beside it go too when named, with ``--helper NAME`` (repeatable)
  or in ``submission.json`` inside the package: ``{"helpers": ["mylib"], "class": "Agent"}``;
* caches (``__pycache__``, ``*.pyc``) and VCS folders are left out.

The archive is a zip with ``submission.json`` at its top naming the entry; it goes up over the
``Submissions`` gRPC service in chunks, authenticated by your token.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from client_sdk._connect import unreachable
from client_sdk._errors import SdkError
from client_sdk._options import TokenError, add_server_options, address_of, token_of
from client_sdk._tls import TlsSetupError, handshake_failure, tls_of, tls_options

CHUNK = 256 * 1024
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


class PackError(SdkError, ValueError):
    """The bot cannot be packed; the message says why."""


@dataclass(frozen=True, slots=True)
class Package:
    """The archive to upload and what it holds."""

    data: bytes
    entry: str
    files: int
    #: What the packing did that its author should know (a symbolic link followed).
    notes: tuple[str, ...] = ()


def pack(path: str, helpers: Sequence[str] = ()) -> Package:
    """Zip the bot at ``path`` (``dir``, ``file.py``, optional ``:Class``) and its helpers."""
    target, cls = _split(path)
    source = Path(target)
    manifest: dict[str, Any] = {}
    if source.is_dir():
        if not (source / "__init__.py").is_file():
            raise PackError(f"{target}: a bot package needs an __init__.py")
        own = source / "submission.json"
        if own.is_file():
            try:
                manifest = json.loads(own.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise PackError(f"{own}: not valid JSON ({exc})") from None
        entry = source.resolve().name
    elif source.is_file() and source.suffix == ".py":
        entry = source.stem
    else:
        raise PackError(f"{target}: not a package folder or a .py file")
    cls = cls or manifest.get("class")
    names = [*helpers, *manifest.get("helpers", [])]
    items = [source.resolve(), *(_helper(source, h) for h in names)]
    buffer = io.BytesIO()
    count = 0
    notes: list[str] = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        top = {"entry": entry, **({"class": cls} if cls else {})}
        archive.writestr("submission.json", json.dumps(top))
        for item in dict.fromkeys(items):
            for file, name in _files(item, notes):
                archive.write(file, name)
                count += 1
    return Package(buffer.getvalue(), entry, count, tuple(notes))


def _split(path: str) -> tuple[str, str | None]:
    head, sep, tail = path.rpartition(":")
    if sep and head and tail.isidentifier():
        return head, tail
    return path, None


def _helper(source: Path, name: str) -> Path:
    """A helper named relative to the folder the bot lies in (or a path)."""
    beside = source.resolve().parent
    for candidate in (Path(name), beside / name, beside / f"{name}.py"):
        if candidate.exists():
            return candidate.resolve()
    raise PackError(f"helper {name!r}: no package or module of that name beside {source}")


def _files(item: Path, notes: list[str]) -> Iterator[tuple[Path, str]]:
    """Every file to upload from ``item`` (a resolved file or folder) with its name in the
    archive. A symbolic link inside the folder that points inside it is uploaded as what it
    points to (said in ``notes``); one that points outside is refused, naming it: following
    it would upload a file the author never meant to share (``/etc/passwd``, a key)."""
    if item.is_file():
        yield item, item.name
        return
    yield from _walk(item, item, Path(item.name), notes, {item})


def _walk(
    root: Path, folder: Path, base: Path, notes: list[str], seen: set[Path]
) -> Iterator[tuple[Path, str]]:
    """The files under ``folder`` (inside ``root``), named relative to ``base``."""
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name in _SKIP_DIRS or entry.name.endswith(_SKIP_SUFFIXES):
            continue
        name = (base / entry.relative_to(folder)).as_posix()
        target = entry
        if entry.is_symlink():
            target = entry.resolve()
            if not target.is_relative_to(root):
                raise PackError(
                    f"{entry} is a symbolic link to {target}, outside the bot's folder {root}: "
                    "refused (copy the file into the folder if the bot needs it)"
                )
            notes.append(f"{entry} is a symbolic link: uploaded as the contents of {target}")
        if target.is_dir():
            if target in seen:  # a link back up the tree: its files are uploaded already
                continue
            yield from _walk(root, target, Path(name), notes, seen | {target})
        elif target.is_file():
            yield target, name


def channel(args: argparse.Namespace) -> grpc.Channel:
    tls = tls_of(args)
    server = address_of(args.server, tls is not None)
    if tls is not None:
        return grpc.secure_channel(server, tls.credentials())
    return grpc.insecure_channel(server)


def reason(args: argparse.Namespace, exc: grpc.RpcError) -> str:
    """Why a call failed: the referee's words, why the TLS handshake failed, or that no
    referee answers at that address (the connecting command's sentence)."""
    server = address_of(args.server, args.tls)
    if exc.code() == grpc.StatusCode.UNAVAILABLE:
        why = handshake_failure(tls_of(args), server) if args.tls else None
        return why or unreachable(server, args.tls, exc.code(), exc.details() or "")
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
    parser.add_argument("--no-wait", action="store_true", help="do not wait for validation")
    parser.add_argument(
        "--first-only",
        action="store_true",
        help="return after the first check's verdict (follow the full games with `mine`)",
    )
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"bot": args.name or "", "version": "", "status": "rejected"}
    try:
        secret = token(args)
        package = pack(args.path, args.helper)
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
    return {"status": c.status, "reason": c.reason, "first_check": "passed", "place": c.place}


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
