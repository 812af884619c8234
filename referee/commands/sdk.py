"""``referee sdk wheel -o DIR``: the SDK's wheel of this version, for an instructor who
hands it out elsewhere (the web front serves the same wheel at ``/sdk``)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from referee.commands._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "sdk",
        help="the bot authors' SDK: its wheel of this version",
        description="The SDK's wheel of the running version (the one the web front serves at "
        "/sdk): built from the installed source once, then cached.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    wheel = actions.add_parser(
        "wheel", help="write the SDK's wheel to a folder", description=wheel_help()
    )
    wheel.add_argument(
        "-o", "--out", default=".", metavar="DIR", help="the folder to write it to (default .)"
    )
    wheel.add_argument("--json", action="store_true", help="print one JSON object")
    wheel.set_defaults(func=run_wheel)


def wheel_help() -> str:
    return (
        "Write the SDK's wheel of this version to DIR and print its name, size and SHA-256. "
        "Students install it with pip install FILE (or from the server's /sdk page)."
    )


def run_wheel(args: argparse.Namespace) -> int:
    return write_wheel(Path(args.out), as_json=args.json)


def write_wheel(out: Path, *, as_json: bool) -> int:
    """Copy the wheel into ``out``; one line (or one JSON object) saying what was written."""
    from referee.tools.sdkwheel import WheelError, sdk_wheel

    if not out.is_dir():
        print(f"referee sdk wheel: {out}: no such folder", file=sys.stderr)
        return 2
    try:
        wheel = sdk_wheel()
    except WheelError as exc:
        print(f"referee sdk wheel: {exc}", file=sys.stderr)
        return 2
    target = out / wheel.name
    shutil.copyfile(wheel.path, target)
    if as_json:
        print(json.dumps({"path": str(target), "size": wheel.size, "sha256": wheel.sha256}))
    else:
        print(f"{target}  {wheel.size / 1024:.0f} KiB  sha256 {wheel.sha256}")
        print(f"install it with: pip install {target}")
    return 0
