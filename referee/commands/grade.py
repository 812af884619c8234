"""``referee grade``: each student's bot against the reference levels, a grade with 95%
confidence per student, for the learning-management system (``--csv``) and the instructor's
page (``/instructor/grades``). See :mod:`referee.analysis.grading`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from referee.commands._arena import fail, open_repo
from referee.commands._common import (
    Subparsers,
    add_game_options,
    configure_logs,
    stored_ref,
)
from referee.commands._queued import add_queue_option
from referee.commands._tools_options import add_pair_book_option, add_tool_run_options, pair_book

if TYPE_CHECKING:
    from referee.analysis.grading import GradeRun, GradeSettings, StudentGrade
    from referee.hosting.grade_play import GameSettings
    from referee.sandbox.isolation import Isolation
    from referee.storage import BotVersionInfo, Repository


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="grade each student's bot against the reference levels (95%% confidence)",
        description=(
            "Each student's graded version plays pairs of games (one opening of the book, "
            "colours swapped) against reference Level1, then Level2, then Level3, until the "
            "pentanomial SPRT decides or --max-pairs is reached (or exactly --pairs pairs per "
            "level); the grade is the highest level beaten with 95% confidence. Stored games "
            "are reused: grading again plays only what is missing. On PostgreSQL the games "
            "go to `referee worker` processes unless --in-process. See docs/referee.md."
        ),
    )
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="bots to grade (name or name@version; default: every submitted bot's latest "
        "accepted version, or the entries of --tournament)",
    )
    parser.add_argument(
        "--tournament",
        metavar="NAME",
        type=stored_ref,
        help="grade the versions this tournament plays (frozen)",
    )
    parser.add_argument(
        "--before",
        metavar="TIME",
        help="grade each submitted bot's latest version accepted before this UTC time",
    )
    parser.add_argument("--pairs", type=int, help="a fixed budget: this many pairs per level")
    parser.add_argument(
        "--max-pairs", type=int, default=20, help="SPRT: stop after this many pairs (default 20)"
    )
    parser.add_argument("--elo0", type=float, default=0.0, help="SPRT H0's Elo (default 0)")
    parser.add_argument("--elo1", type=float, default=100.0, help="SPRT H1's Elo (default 100)")
    add_pair_book_option(parser)
    parser.add_argument(
        "--concurrency", type=int, default=2, help="students graded at once (default 2)"
    )
    parser.add_argument("--csv", metavar="FILE", help="one row per student (- for stdout)")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="play nothing: grade from the games already stored",
    )
    add_game_options(parser)
    add_queue_option(parser)
    add_tool_run_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from referee.sandbox.isolation import SandboxUnavailable

    configure_logs(args)
    repo = open_repo(args)
    try:
        settings, game_settings = _settings(args)
        chosen = chosen_versions(repo, args.bots, args.tournament, args.before)
        students, notes = one_per_login(chosen, named=bool(args.bots))
    except (ValueError, KeyError, LookupError) as exc:
        return fail("grade", exc)
    for note in notes:
        print(f"referee grade: {note}", file=sys.stderr)
    if not students:
        return fail("grade", "nothing to grade: no submitted bot (name the bots to grade)", 1)
    try:
        grades, done = asyncio.run(_grade(args, repo, students, settings, game_settings))
    except (ValueError, OSError, SandboxUnavailable) as exc:
        return fail("grade", exc)
    body = report_body(grades, settings.method, game_settings.game.name, done)
    from referee.storage.reports import save_report

    save_report(repo.db, "grades", body)
    if args.csv:
        _write(args.csv, grades_csv(grades))
    if args.json:
        print(json.dumps(body))
    elif args.csv != "-":
        _print(grades, settings.method, done)
    return 0


def _settings(args: argparse.Namespace) -> tuple[GradeSettings, GameSettings]:
    import math

    from engine.registry import load_game
    from referee.analysis.grading import GradeSettings, terms_tag
    from referee.commands._common import game_params, time_control
    from referee.hosting.grade_play import GameSettings

    game = load_game(args.game, **game_params(args))
    book = pair_book(args, game)
    if args.pairs is not None and args.pairs < 1:
        raise ValueError("--pairs must be at least 1")
    if args.max_pairs < 1 or args.concurrency < 1:
        raise ValueError("--max-pairs and --concurrency must be at least 1")
    memory = math.ceil(args.memory) or None
    clocks = time_control(args)
    openings = [o.moves for o in book.openings] if book else None
    terms = terms_tag(game.name, sorted(game.params.items()), clocks, memory, openings)
    settings = GradeSettings(
        elo0=args.elo0,
        elo1=args.elo1,
        max_pairs=args.max_pairs,
        pairs=args.pairs,
        book=book,
        terms=terms,
    )
    return settings, GameSettings(game, clocks, memory)


def chosen_versions(
    repo: Repository, bots: Sequence[str], tournament: int | str | None, before: str | None
) -> list[tuple[BotVersionInfo, str]]:
    """The versions to grade (or compare) with their owners' names: ``bots`` by name, a
    tournament's entries (its frozen versions), or every submitted bot's latest accepted
    version (before ``before``); ``ValueError`` naming a bad choice."""
    from referee.analysis.anchors import anchor_of
    from referee.storage.submissions import list_submissions, playing_version

    if sum(bool(x) for x in (bots, tournament is not None, before)) > 1:
        raise ValueError("give bots, --tournament or --before, not several")
    if bots:
        versions = [_named(repo, text) for text in bots]
    elif tournament is not None:
        t = repo.get_tournament(tournament)
        versions = [v for v in repo.tournament_entrants(t.id) if anchor_of(v) is None]
    else:
        when = datetime.fromisoformat(before) if before else None
        if when is not None and when.tzinfo is None:
            from datetime import UTC

            when = when.replace(tzinfo=UTC)
        submitted = {s.bot_version_id for s in list_submissions(repo.db)}
        bot_ids = sorted({repo.get_bot_version(i).bot_id for i in submitted})
        ids = [playing_version(repo.db, b, when) for b in bot_ids]
        versions = [repo.get_bot_version(i) for i in ids if i is not None]
    owners = {p.id: p.name for p in repo.list_players()}
    return [(v, owners.get(v.owner_id, "-") if v.owner_id else "-") for v in versions]


def one_per_login(
    chosen: Sequence[tuple[BotVersionInfo, str]], *, named: bool
) -> tuple[list[tuple[BotVersionInfo, str]], list[str]]:
    """One version per student login (a grade is a student's): of a login's several bots the
    newest version, with a note naming the others; bots the instructor ``named`` must be one
    per login (``ValueError`` naming them). Bots without an owner are each their own."""
    by_login: dict[str, list[BotVersionInfo]] = {}
    for version, owner in chosen:
        if owner != "-":
            by_login.setdefault(owner, []).append(version)
    several = {login: vs for login, vs in by_login.items() if len(vs) > 1}
    if named and several:
        login, versions = next(iter(several.items()))
        labels = ", ".join(v.label for v in versions)
        raise ValueError(f"{login} has several bots named ({labels}): name one per student")
    kept = {login: max(vs, key=lambda v: v.id) for login, vs in several.items()}
    notes = [
        f"{login}: grading {kept[login].label}, the newest of {len(vs)} bots (not graded: "
        f"{', '.join(v.label for v in vs if v is not kept[login])}; name a bot to grade another)"
        for login, vs in several.items()
    ]
    students = [(v, o) for v, o in chosen if o not in kept or kept[o] is v]
    return students, notes


def _named(repo: Repository, text: str) -> BotVersionInfo:
    name, sep, version = text.partition("@")
    return repo.find_bot_version(name, version if sep else None)


async def _grade(
    args: argparse.Namespace,
    repo: Repository,
    students: list[tuple[BotVersionInfo, str]],
    settings: GradeSettings,
    game_settings: GameSettings,
) -> tuple[list[StudentGrade], GradeRun]:
    from referee.analysis.grading import LEVELS, grade_all
    from referee.commands._common import announce_isolation
    from referee.hosting.grade_play import local_player, queue_player
    from referee.play.bots import register_source
    from referee.workers.queue import is_postgres

    references = [register_source(repo, spec) for _, spec in LEVELS]

    def said(grade: StudentGrade) -> None:
        if not args.json and args.csv != "-":
            line = f"graded {grade.owner} {grade.bot}@{grade.version}: {grade.highest}"
            print(line, file=sys.stderr, flush=True)

    if args.report_only:
        return await grade_all(repo, students, references, settings, None)
    if args.in_process or not is_postgres(repo.db.url):
        isolation = announce_isolation(args.no_sandbox, "referee grade")
        refuse_uncontained(repo, [v for v, _ in students], isolation, args.no_sandbox)
        play = local_player(repo, game_settings, isolation)
        return await grade_all(
            repo, students, references, settings, play, concurrency=args.concurrency, on_grade=said
        )
    from referee.workers.dispatch import QueueDispatcher

    async with QueueDispatcher(repo, repo.db.url) as queue:
        print(
            "games go to the job queue: start `referee worker --db URL` processes to play them",
            file=sys.stderr,
        )
        # Every student at once: the workers are the limit, not this process.
        return await grade_all(
            repo,
            students,
            references,
            settings,
            queue_player(queue, game_settings),
            concurrency=len(students),
            on_grade=said,
        )


def refuse_uncontained(
    repo: Repository, versions: Sequence[BotVersionInfo], isolation: Isolation, allow_none: bool
) -> None:
    """Uploads are never launched without the sandbox unless ``--no-sandbox`` says so."""
    from referee.sandbox.isolation import require_trusted
    from referee.storage.submissions import submission_of_version

    for v in versions:
        uploaded = submission_of_version(repo.db, v.id) is not None
        require_trusted(isolation, not uploaded, f"uploaded bot {v.label}", allow_none)


def level_names() -> list[str]:
    from referee.analysis.grading import LEVELS

    return [name for name, _ in LEVELS]


class GradesReport(TypedDict):
    """The grades as stored for the instructor's page and printed by ``--json``."""

    game: str
    method: str
    levels: list[str]
    played: int
    reused: int
    failed: list[str]
    # Each student's grade as the grading module writes it (``StudentGrade.as_dict``).
    students: list[dict[str, object]]


def report_body(
    grades: Sequence[StudentGrade], method: str, game: str, done: GradeRun
) -> GradesReport:
    """The report as stored for the instructor's page and printed by ``--json``."""
    return {
        "game": game,
        "method": method,
        "levels": level_names(),
        "played": done.played,
        "reused": done.reused,
        "failed": list(done.failed),
        "students": [g.as_dict() for g in grades],
    }


def grades_csv(grades: Sequence[StudentGrade]) -> str:
    """One row per student (see :func:`referee.analysis.grading.grades_csv`)."""
    from referee.analysis.grading import grades_csv as rows

    return rows([g.as_dict() for g in grades], level_names())


def _write(target: str, text: str) -> None:
    from referee.commands._arena import write_out

    write_out(target, text)


def _print(grades: Sequence[StudentGrade], method: str, done: GradeRun) -> None:
    from referee.commands._arena import console
    from referee.commands._safe import SafeTable as Table

    table = Table(title="Grades against the reference levels", caption=method)
    for column in ("student", "bot graded", "grade", *level_names()):
        table.add_column(column, justify="right" if column == "grade" else "left")
    for g in grades:
        cells = []
        for r in g.levels:
            if not r.games:
                cells.append("-")
                continue
            cells.append(f"{100 * (r.score or 0):.0f}% of {r.games} ({r.state}, {r.decided_by})")
        grade = f"{g.grade} {g.highest}" if g.status == "graded" else g.status
        table.add_row(g.owner, f"{g.bot}@{g.version}", grade, *cells)
    console().print(table)
    print(f"{done.played} games played now, {done.reused} reused from storage", end="")
    print(f"; {len(done.failed)} could not be played" if done.failed else "")
