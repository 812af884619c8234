"""Lessons on the web: a bot's lessons by version, each board drawn before the move with the
move played outlined and the reference's better moves as numbered ghosts (its owner and the
staff only, as ``GetMyLessons``), and the instructor's page of the class's most common kinds
of mistake. The lessons are :class:`referee.analysis.lessonbook.LessonBook`'s."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from client_sdk.reference.search import WIN
from engine.errors import EngineError
from engine.records.lessons import Lesson, lesson_state
from engine.render import render_svg
from referee.analysis.lessonbook import LessonBook
from referee.storage.bots import BotVersionInfo
from referee.storage.lessonruns import PositionRun, runs_of
from referee.storage.submissions import submission_of_version
from referee.web.account import require_session
from referee.web.context import Web, web_of
from referee.web.instructor import is_instructor
from referee.web.replay import ghost_cells

#: Better moves drawn on a board (numbered 1, 2, 3).
DRAWN = 3
#: The most lessons a version's section shows (worst first).
SHOWN = 40


async def bot_lessons(request: Request) -> Response:
    """``/bots/{id}/lessons``: the bot's lessons, newest version first."""
    web = web_of(request)
    session = require_session(request)
    bot_id = request.path_params["bot_id"]
    data = await asyncio.to_thread(_bot_data, web, bot_id, session.player_id)
    return web.render(request, "lessons.html", data)


def _bot_data(web: Web, bot_id: int, viewer: int) -> dict[str, object]:
    repo = web.need_repo()
    versions = [v for v in repo.list_bot_versions() if v.bot_id == bot_id]
    if not versions:
        raise HTTPException(404, f"no bot {bot_id}")
    if versions[0].owner_id != viewer and not is_instructor(web, viewer):
        # The same answer as for a bot that does not exist: lessons are their owner's.
        raise HTTPException(404, f"no lessons of bot {bot_id} for you")
    sections = []
    ordered = sorted(versions, key=lambda v: v.id, reverse=True)
    runs = runs_of(repo.db, [v.id for v in ordered])
    for index, version in enumerate(ordered):
        found = _book(web).of_versions([version])
        earlier = ordered[index + 1] if index + 1 < len(ordered) else None
        worst = sorted(found.lessons, key=_drop, reverse=True)[:SHOWN]
        sections.append(
            {
                "version": version,
                "games": found.games,
                "pending": found.pending,
                "count": len(found.lessons),
                "kinds": Counter(x.kind for x in found.lessons).most_common(),
                "lessons": [_view(x) for x in worst],
                "earlier": earlier,
                "runs": compared(version, ordered, runs),
                "uploaded": submission_of_version(repo.db, version.id) is not None,
            }
        )
    return {"bot": versions[0], "sections": sections}


def compared(
    version: BotVersionInfo, versions: Sequence[BotVersionInfo], runs: Sequence[PositionRun]
) -> list[dict[str, Any]]:
    """What the server's lesson runs said of ``version`` on each earlier version's lessons
    ("vN solves X of the Y positions vM lost"), with each position's outcome."""
    labels = {v.id: v.version for v in versions}
    mine = [r for r in runs if r.version_id == version.id]
    out: list[dict[str, Any]] = []
    for of_id in sorted({r.lessons_of_id for r in mine}, reverse=True):
        positions = [r for r in mine if r.lessons_of_id == of_id]
        out.append(
            {
                "of": labels.get(of_id, str(of_id)),
                "solved": sum(r.solved for r in positions),
                "total": len(positions),
                "positions": positions,
            }
        )
    return out


def _book(web: Web) -> LessonBook:
    web.need_repo()
    assert web.lessons is not None
    return web.lessons


def _drop(lesson: Lesson) -> float:
    return (lesson.best_score or 0.0) - (lesson.played_score or 0.0)


def _view(lesson: Lesson) -> dict[str, object]:
    """One lesson as the page shows it: its board and its words."""
    return {
        "lesson": lesson,
        "board": _board(lesson),
        "good": [(i + 1, move, score_text(score)) for i, (move, score) in enumerate(lesson.good)],
        "played": score_text(lesson.played_score),
    }


def _board(lesson: Lesson) -> Markup:
    """The position before the move: the move played outlined, better moves as ghosts."""
    try:
        state = lesson_state(lesson)
    except (EngineError, ValueError):
        return Markup("")
    ghosts: dict[tuple[int, int], tuple[str, int]] = {}
    for number, (move, _) in enumerate(lesson.good[:DRAWN], start=1):
        for cell, (char, _) in ghost_cells(state, [move]).items():
            ghosts.setdefault(cell, (char, number))
    played = set(ghost_cells(state, [lesson.played])) if lesson.played else set()
    title = f"ply {lesson.ply}: {lesson.played} was played" if lesson.played else "position"
    svg = render_svg(
        state, cell=20, highlight=played, highlight_last=False, ghosts=ghosts, title=title
    )
    # The renderer escapes every text it writes (the title included).
    return Markup(svg)


def score_text(value: float | None) -> str:
    """A reference score for people: a forced win or loss in plies, else points."""
    if value is None:
        return "?"
    if value > WIN / 2:
        return f"wins in {int(WIN - value)}"
    if value < -WIN / 2:
        return f"loses in {int(WIN + value)}"
    return f"{value:+.1f}"


async def class_mistakes(request: Request) -> Response:
    """``/instructor/lessons``: the class's most common kinds of mistake (staff only)."""
    web = web_of(request)
    session = require_session(request)
    if not await asyncio.to_thread(is_instructor, web, session.player_id):
        raise HTTPException(403, "this page is for instructors")
    data = await asyncio.to_thread(_class_data, web)
    return web.render(request, "instructor_lessons.html", data)


def _class_data(web: Web) -> dict[str, object]:
    repo = web.need_repo()
    owners = {p.id: p.name for p in repo.list_players()}
    versions: Sequence[BotVersionInfo] = repo.list_bot_versions()
    kinds: Counter[str] = Counter()
    students: dict[str, Counter[str]] = {}
    games = pending = 0
    for version in versions:
        found = _book(web).of_versions([version])
        games += found.games
        pending += found.pending
        owner = owners.get(version.owner_id or 0, "(no owner)")
        for lesson in found.lessons:
            kinds[lesson.kind] += 1
            students.setdefault(owner, Counter())[lesson.kind] += 1
    rows: list[dict[str, Any]] = [
        {
            "kind": kind,
            "count": count,
            "students": sum(1 for c in students.values() if c[kind]),
        }
        for kind, count in kinds.most_common()
    ]
    return {
        "kinds": rows,
        "total": sum(kinds.values()),
        "games": games,
        "pending": pending,
        "progress": class_progress(versions, owners, runs_of(repo.db, [v.id for v in versions])),
    }


def class_progress(
    versions: Sequence[BotVersionInfo], owners: dict[int, str], runs: Sequence[PositionRun]
) -> list[dict[str, Any]]:
    """Per student and bot version: how many of its earlier versions' lost positions it
    solves (the server's lesson runs, summed over the earlier versions)."""
    by_id = {v.id: v for v in versions}
    totals: dict[int, list[int]] = {}
    for run in runs:
        counts = totals.setdefault(run.version_id, [0, 0])
        counts[0] += run.solved
        counts[1] += 1
    return [
        {
            "student": owners.get(by_id[vid].owner_id or 0, "(no owner)"),
            "version": by_id[vid],
            "solved": solved,
            "total": total,
        }
        for vid, (solved, total) in sorted(totals.items())
        if vid in by_id
    ]
