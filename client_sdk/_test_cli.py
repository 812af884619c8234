"""``python -m client_sdk test LESSONS BOT``: run a bot on every position of a lessons file.

Each position is played by a fresh bot process (:mod:`client_sdk._lessontest`) under the
file's limits; a line per position says whether the bot's move is one of the good ones, then
a summary (solved / total, and by kind of mistake). The exit status is 0 when at least
``--at-least`` positions are solved (default: all of them), 1 when fewer are, 2 when the file
or the options are wrong, so a bot's own CI can run it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.records.lessons import Lesson, LessonsFile, Limits


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m client_sdk test",
        description="Run BOT on every position of a lessons file (python -m client_sdk "
        "lessons makes one), each from a fresh process under the game's limits, and report "
        "which it solves. Exit status 0: at least --at-least solved (default all); 1: fewer.",
    )
    parser.add_argument("lessons", metavar="LESSONS", help="a lessons file (.jsonl)")
    parser.add_argument("bot", metavar="BOT", help="package dir[:Class], module[:Name] or file.py")
    parser.add_argument("--kind", default="", help="only lessons of this kind of mistake")
    parser.add_argument(
        "--at-least", type=int, default=None, metavar="N", help="solved positions to pass"
    )
    parser.add_argument("-t", "--time", type=float, help="seconds per position (default: file's)")
    parser.add_argument("-s", "--memory", type=float, metavar="MB", help="default: the file's")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the bot's output")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    return parser


def test_main(argv: Sequence[str]) -> int:
    from client_sdk._local import BUILTIN_OPPONENTS

    args = _parser().parse_args(argv)
    try:
        book = _read(args.lessons)
    except ValueError as exc:
        print(f"python -m client_sdk test: {exc}", file=sys.stderr)
        return 2
    limits = book.limits
    if args.time is not None:
        limits = replace(limits, game_time_s=args.time, move_time_s=0.0)
    if args.memory is not None:
        limits = replace(limits, memory_mb=args.memory)
    lessons = [x for x in book.lessons if not args.kind or x.kind == args.kind]
    bot = BUILTIN_OPPONENTS.get(args.bot, args.bot)
    rows = _run(bot, lessons, limits, args)
    summary = _summary(rows, args.at_least)
    # Lessons of one version: the line says what the bot run here makes of that version's.
    lost_by = sorted({f"{x.bot}@{x.version}" if x.bot else x.version for x in lessons if x.version})
    summary["bot"] = args.bot
    summary["lessons_of"] = lost_by[0] if len(lost_by) == 1 else None
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        _print_summary(summary)
    return 0 if summary["passed"] else 1


def _read(path: str) -> LessonsFile:
    from engine.errors import RecordError
    from engine.records.lessons import read_lessons

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    try:
        return read_lessons(text)
    except RecordError as exc:
        raise ValueError(f"{path} is not a lessons file:\n{exc}") from None


def _run(
    bot: str, lessons: Sequence[Lesson], limits: Limits, args: argparse.Namespace
) -> list[dict[str, Any]]:
    from client_sdk._lessontest import try_lesson

    rows = []
    for number, lesson in enumerate(lessons, 1):
        tried = try_lesson(bot, lesson, limits, echo=args.verbose)
        row = {
            "index": number,
            "game_id": lesson.game_id,
            "ply": lesson.ply,
            "kind": lesson.kind,
            "result": tried.result,
            "solved": tried.solved,
            "move": tried.move,
            "good": [move for move, _ in lesson.good],
            "played": lesson.played,
            "seconds": round(tried.seconds, 3),
            "detail": tried.detail,
        }
        rows.append(row)
        if not args.json:
            _print_row(row)
    return rows


def _print_row(row: dict[str, Any]) -> None:
    where = f"game {row['game_id']} ply {row['ply']}" if row["game_id"] else "added position"
    mark = "ok  " if row["solved"] else "FAIL"
    move = row["move"] or "-"
    line = f"{mark} {row['index']:>3}. {where} [{row['kind']}]: {row['result']}, played {move}"
    if not row["solved"]:
        line += f"; good: {', '.join(row['good'][:3])}"
    if row["detail"]:
        line += f" ({row['detail']})"
    print(f"{line}  {row['seconds']:.2f} s", flush=True)


def _summary(rows: list[dict[str, Any]], at_least: int | None) -> dict[str, Any]:
    total = len(rows)
    solved = sum(1 for r in rows if r["solved"])
    kinds: dict[str, dict[str, int]] = {}
    for row in rows:
        entry = kinds.setdefault(row["kind"], {"solved": 0, "total": 0})
        entry["total"] += 1
        entry["solved"] += int(row["solved"])
    need = total if at_least is None else at_least
    seconds = sum(r["seconds"] for r in rows)
    return {
        "solved": solved,
        "total": total,
        "by_kind": kinds,
        "results": dict(Counter(r["result"] for r in rows)),
        "needed": need,
        "passed": solved >= need,
        "seconds": round(seconds, 3),
        "seconds_per_position": round(seconds / total, 3) if total else 0.0,
        "positions": rows,
    }


def _print_summary(summary: dict[str, Any]) -> None:
    print(
        f"solved {summary['solved']}/{summary['total']} "
        f"({summary['seconds_per_position']:.2f} s a position)"
    )
    if summary["lessons_of"]:
        print(
            f"{summary['bot']} solves {summary['solved']} of the {summary['total']} positions "
            f"{summary['lessons_of']} lost"
        )
    for kind, entry in sorted(summary["by_kind"].items()):
        print(f"  {kind}: {entry['solved']}/{entry['total']}")
    verdict = "passed" if summary["passed"] else "FAILED"
    print(f"{verdict}: {summary['needed']} needed")
