"""``referee similarity``: which submitted bots look or play alike, for the instructor to read.

For every pair of the chosen bots: a code similarity (winnowed fingerprints of normalised
tokens, referee.analysis.similarity; the shipped example and reference bots are common
code) and a behaviour similarity (the same move on the same positions, asked in the sandbox,
referee.analysis.behaviour). The pairs above a threshold are listed with the matching
fragments side by side; the report is also stored for the instructor's page
(/instructor/similarity). It flags; it decides nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from referee.commands._arena import fail, open_repo
from referee.commands._common import (
    Subparsers,
    configure_logs,
    stored_ref,
)
from referee.commands._tools_options import add_tool_run_options

if TYPE_CHECKING:
    from referee.analysis.similarity import CodeMatch
    from referee.storage import BotVersionInfo, Repository


class FragmentJson(TypedDict):
    """Matching lines of two bots (``a_lines``: first and last line)."""

    a_file: str
    a_lines: list[int]
    b_file: str
    b_lines: list[int]
    a_text: str
    b_text: str


class PairJson(TypedDict):
    """Two bots compared: the code share, and the behaviour share once asked."""

    a: str
    b: str
    code: float
    shared: int
    #: Both bots are mostly shipped code and share this much of it (None: they are not).
    shipped_copies: float | None
    behaviour: float | None
    positions: int
    fragments: list[FragmentJson]


class SimilarityReport(TypedDict):
    """The report as stored and printed by ``--json``; :func:`run` adds the keys after
    ``method`` as it goes."""

    bots: list[str]
    threshold: float
    pairs: list[PairJson]
    method: str
    skipped: NotRequired[list[str]]
    behaviour_threshold: NotRequired[float]
    asked_positions: NotRequired[int]
    flagged: NotRequired[list[PairJson]]


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "similarity",
        help="code and behaviour similarity of submitted bots (flags pairs to look at)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="bots to compare (default: every submitted bot's latest accepted version, or the "
        "entries of --tournament)",
    )
    parser.add_argument(
        "--tournament", metavar="NAME", type=stored_ref, help="compare this tournament's entries"
    )
    parser.add_argument("--before", metavar="TIME", help="versions accepted before this UTC time")
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="flag pairs sharing at least this share of code fingerprints (default 0.5)",
    )
    parser.add_argument(
        "--behaviour-threshold",
        type=float,
        default=0.8,
        help="flag pairs choosing the same move this often (default 0.8)",
    )
    parser.add_argument(
        "--positions", type=int, default=12, help="positions each bot is asked (default 12)"
    )
    parser.add_argument(
        "--no-behaviour", action="store_true", help="compare code only (launch nothing)"
    )
    parser.add_argument("--concurrency", type=int, default=2, help="games at once (default 2)")
    parser.add_argument("--game", default="tetress", help="the game asked (default tetress)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_tool_run_options(parser, move_time=5.0)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from referee.commands._common import time_control
    from referee.commands.grade import chosen_versions
    from referee.sandbox.isolation import SandboxUnavailable
    from referee.storage.reports import save_report

    configure_logs(args)
    if not 0 <= args.threshold <= 1 or not 0 <= args.behaviour_threshold <= 1:
        return fail("similarity", "--threshold and --behaviour-threshold are shares from 0 to 1")
    if args.positions < 1 or args.concurrency < 1 or not args.move_time > 0:
        return fail("similarity", "--positions, --concurrency and --move-time must be positive")
    try:
        time_control(args)
    except ValueError as exc:
        return fail("similarity", exc)
    repo = open_repo(args)
    try:
        chosen = chosen_versions(repo, args.bots, args.tournament, args.before)
    except (ValueError, KeyError, LookupError) as exc:
        return fail("similarity", exc)
    bots, skipped = _with_code(repo, chosen)
    if len(bots) < 2:
        return fail("similarity", "fewer than two bots with code to compare", 1)
    body = _code_report(bots, args.threshold)
    body["skipped"] = skipped
    if not args.no_behaviour:
        try:
            asyncio.run(_behaviour(args, repo, bots, body))
        except SandboxUnavailable as exc:
            return fail("similarity", exc)
    body["flagged"] = [p for p in body["pairs"] if _flagged(p, args)]
    save_report(repo.db, "similarity", body)
    if args.json:
        print(json.dumps(body))
    else:
        print_report(body)
    return 0


def _with_code(
    repo: Repository, chosen: Sequence[tuple[BotVersionInfo, str]]
) -> tuple[list[tuple[BotVersionInfo, str, Path]], list[str]]:
    """The chosen bots with the folder or file of their code; the others, each with why."""
    from referee.analysis.anchors import anchor_of

    found, skipped = [], []
    for version, owner in chosen:
        if anchor_of(version) is not None:
            skipped.append(f"{version.label}: a shipped reference bot (common code)")
            continue
        path = code_path(version)
        if path is None:
            skipped.append(f"{version.label}: no code here ({version.source_kind.value})")
            continue
        found.append((version, owner, path))
    return found, skipped


def code_path(version: BotVersionInfo) -> Path | None:
    """Where a bot version's code is on this machine (``None``: a remote bot, a command)."""
    from referee.play.bots import module_origin
    from referee.storage import SourceKind

    if version.source_kind in (SourceKind.REMOTE, SourceKind.COMMAND):
        return None
    target = version.location
    if not Path(target).exists() and ":" in target:
        target = target.rsplit(":", 1)[0]
    if Path(target).exists():
        return Path(target)
    return module_origin(target)


def _label(version: BotVersionInfo, owner: str) -> str:
    return f"{owner}: {version.label}" if owner != "-" else version.label


def _code_report(
    bots: Sequence[tuple[BotVersionInfo, str, Path]], threshold: float
) -> SimilarityReport:
    from referee.analysis.similarity import (
        common_hashes,
        compare,
        fingerprint,
        shipped_copies,
        shipped_roots,
    )

    common = common_hashes(shipped_roots())
    prints = [fingerprint(_label(v, o), path, common) for v, o, path in bots]
    wholes = [fingerprint(_label(v, o), path) for v, o, path in bots]
    pairs: list[PairJson] = []
    for (a, wa), (b, wb) in itertools.combinations(zip(prints, wholes, strict=True), 2):
        match = compare(a, b)
        copies = shipped_copies((wa, wb), (a, b), threshold)
        # The fragments of a flagged pair: its own shared code, else the shipped code both copy.
        shown = match if match.score >= threshold else copies
        pairs.append(
            {
                "a": a.name,
                "b": b.name,
                "code": round(match.score, 4),
                "shared": match.shared,
                "shipped_copies": None if copies is None else round(copies.score, 4),
                "behaviour": None,
                "positions": 0,
                "fragments": [] if shown is None else _fragments(shown),
            }
        )
    return {
        "bots": [p.name for p in prints],
        "threshold": threshold,
        "pairs": pairs,
        "method": "winnowed fingerprints of normalised Python tokens (k=12, w=8); "
        "the shipped example and reference bots are common code, but two bots that are each "
        "mostly one shipped bot's code are flagged as copies of it",
    }


def _fragments(match: CodeMatch) -> list[FragmentJson]:
    return [
        {
            "a_file": f.a_file,
            "a_lines": list(f.a_lines),
            "b_file": f.b_file,
            "b_lines": list(f.b_lines),
            "a_text": f.a_text,
            "b_text": f.b_text,
        }
        for f in match.fragments
    ]


async def _behaviour(
    args: argparse.Namespace,
    repo: Repository,
    bots: Sequence[tuple[BotVersionInfo, str, Path]],
    body: SimilarityReport,
) -> None:
    from referee.analysis.behaviour import agreement, answers_of, probe_positions
    from referee.commands._common import announce_isolation, time_control
    from referee.commands.grade import refuse_uncontained
    from referee.play.bots import launch_spec

    isolation = announce_isolation(args.no_sandbox, "referee similarity")
    refuse_uncontained(repo, [v for v, _, _ in bots], isolation, args.no_sandbox)
    positions = probe_positions(args.game, args.positions)
    clock = time_control(args)
    answers = [
        await answers_of(
            _label(v, o),
            launch_spec(v),
            args.game,
            positions,
            time_control=clock,
            memory_mb=args.memory or None,
            isolation=isolation,
            concurrency=args.concurrency,
        )
        for v, o, _ in bots
    ]
    by_name = {a.name: a for a in answers}
    for pair in body["pairs"]:
        share, both = agreement(by_name[pair["a"]], by_name[pair["b"]])
        pair["behaviour"] = None if share is None else round(share, 4)
        pair["positions"] = both
    body["behaviour_threshold"] = args.behaviour_threshold
    body["asked_positions"] = len(positions)


def _flagged(pair: PairJson, args: argparse.Namespace) -> bool:
    behaviour = pair.get("behaviour")
    return bool(
        pair["code"] >= args.threshold
        or pair.get("shipped_copies") is not None
        or (behaviour is not None and behaviour >= args.behaviour_threshold)
    )


def print_report(body: SimilarityReport) -> None:
    """The pairs table, then each flagged pair's fragments side by side."""
    from referee.commands._arena import console
    from referee.commands._safe import SafeTable as Table

    out = console()
    table = Table(
        title=f"Similarity of {len(body['bots'])} bots ({len(body['pairs'])} pairs)",
        caption="code: shared fingerprints over the smaller bot's; behaviour: same move on "
        "the same positions. A flag is a reason to look, never a verdict.",
    )
    for column in ("bot A", "bot B", "code", "behaviour", "flag"):
        table.add_column(column, justify="left" if column.startswith("bot") else "right")
    flagged = {(p["a"], p["b"]) for p in body["flagged"]}
    ranked = sorted(body["pairs"], key=lambda p: -max(p["code"], p["behaviour"] or 0.0))
    for p in ranked:
        shown = (
            "-" if p["behaviour"] is None else f"{100 * p['behaviour']:.0f}% of {p['positions']}"
        )
        mark = "look" if (p["a"], p["b"]) in flagged else ""
        code = f"{100 * p['code']:.0f}%"
        if (copies := p.get("shipped_copies")) is not None:
            code += f" ({100 * copies:.0f}% with shipped code)"
            mark += ": both copy shipped code"
        table.add_row(p["a"], p["b"], code, shown, mark)
    out.print(table)
    for p in body["flagged"]:
        for f in p["fragments"]:
            side = Table(title=f"{p['a']} and {p['b']}: matching code", show_lines=False)
            side.add_column(f"{p['a']}  {f['a_file']}:{f['a_lines'][0]}-{f['a_lines'][1]}")
            side.add_column(f"{p['b']}  {f['b_file']}:{f['b_lines'][0]}-{f['b_lines'][1]}")
            side.add_row(f["a_text"], f["b_text"])
            out.print(side)
    for line in body.get("skipped", []):
        print(f"not compared: {line}")
