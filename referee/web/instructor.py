"""The instructor's pages: the newest grades and similarity reports (``referee grade``,
``referee similarity``) and the validation queue, for a signed-in player holding an
instructor (or admin) token only.

A student never sees them: grades of others and suspicions about others are private. The
pages read the stored report and launch nothing.
"""

from __future__ import annotations

import asyncio
import time

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.analysis.grading import grades_csv as csv_of
from referee.storage.enums import Role
from referee.storage.reports import Report, latest_report
from referee.storage.submissions import list_submissions
from referee.submissions.validation_queue import rows_from_store
from referee.web.account import require_session
from referee.web.context import Web, web_of


def is_instructor(web: Web, player_id: int) -> bool:
    """Whether the player holds an active instructor (or admin) token."""
    tokens = web.need_repo().list_tokens(player_id)
    return any(t.state() == "active" and t.role.allows(Role.INSTRUCTOR) for t in tokens)


async def _report(request: Request, kind: str) -> tuple[Web, Report | None]:
    web = web_of(request)
    session = require_session(request)
    if not await asyncio.to_thread(is_instructor, web, session.player_id):
        raise HTTPException(403, "this page is for instructors")
    report = await asyncio.to_thread(latest_report, web.need_repo().db, kind)
    return web, report


async def grades(request: Request) -> Response:
    web, report = await _report(request, "grades")
    return web.render(request, "instructor_grades.html", {"report": report})


async def grades_csv(request: Request) -> Response:
    _, report = await _report(request, "grades")
    if report is None:
        raise HTTPException(404, "no grades yet: run referee grade")
    body = report.body
    text = csv_of(body.get("students", []), body.get("levels", []))
    return Response(
        text,
        media_type="text/csv",
        headers={"content-disposition": 'attachment; filename="grades.csv"'},
    )


async def queue(request: Request) -> Response:
    """The validation queue: this server's own when it takes uploads, else the database's."""
    web = web_of(request)
    session = require_session(request)
    if not await asyncio.to_thread(is_instructor, web, session.player_id):
        raise HTTPException(403, "this page is for instructors")
    submissions = request.app.state.submissions
    if submissions is not None:
        rows = submissions.queue.rows()
    else:
        found = await asyncio.to_thread(list_submissions, web.need_repo().db)
        rows = rows_from_store(found, time.time())
    return web.render(request, "instructor_queue.html", {"rows": rows})


async def similarity(request: Request) -> Response:
    web, report = await _report(request, "similarity")
    return web.render(request, "instructor_similarity.html", {"report": report})
