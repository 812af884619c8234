"""Bot uploads from the browser, through the same submission service as the gRPC upload.

The archive goes to :meth:`Submissions.receive` (the same vetting, store, quotas and name
checks as ``python -m client_sdk submit``); a refusal is shown with the service's own sentence
and nothing is kept. An accepted upload is validated in the background and the student's page
follows its status (validating, accepted, rejected) with the validation's reason and the bot's
own output, which only its owner ever sees.

The body limit (archive limit plus room for the form) is enforced by
:class:`~referee.web.security.BodyLimit` before the body is read.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from referee.submissions.errors import UploadRefused
from referee.web.account import my_bots, require_session
from referee.web.context import CSRF_COOKIE, Web, web_of
from referee.web.security import Session, csrf_ok

if TYPE_CHECKING:
    from referee.storage.submissions import SubmissionInfo
    from referee.submissions.service import Submissions

#: Room for the multipart framing and the other fields around the archive itself.
FORM_OVERHEAD_BYTES = 64 * 1024


def upload_limit(submissions: Submissions | None) -> int | None:
    """The request body limit for uploads to ``submissions`` (``None``: no service)."""
    if submissions is None:
        return None
    return int(submissions.limits.max_archive_bytes) + FORM_OVERHEAD_BYTES


def view(
    web: Web, session: Session, submissions: Submissions | None
) -> list[SubmissionInfo] | None:
    """The student's own submissions, newest first (``None``: uploads are off here)."""
    if submissions is None:
        return None
    from referee.storage import submissions as rows

    found = rows.list_submissions(submissions.repo.db, owner=session.player)
    return sorted(found, key=lambda s: (s.uploaded_at, s.id), reverse=True)


@dataclass(frozen=True, slots=True)
class Checked:
    """Where an upload's validation game is read: its page, and the bot's failure pack when it
    faulted there (None: it did not)."""

    game: str
    pack: str | None


def validation_links(
    web: Web, session: Session, found: list[SubmissionInfo] | None
) -> dict[int, Checked]:
    """Per submission id, its validation game's page and the student's pack in it."""
    from referee.storage import NotFoundError

    repo = web.need_repo()
    links: dict[int, Checked] = {}
    for info in found or ():
        if not info.validation_game_uid:
            continue
        try:
            detail = repo.get_game(info.validation_game_uid)
        except NotFoundError:
            continue
        game_id = detail.summary.id
        pack = next(
            (
                f"/games/{game_id}/pack/{seat.seat}"
                for seat in detail.summary.seats
                if seat.seat < len(detail.failure_packs)
                and detail.failure_packs[seat.seat]
                and repo.get_bot_version(seat.bot_version_id).owner_id == session.player_id
            ),
            None,
        )
        links[info.id] = Checked(f"/games/{game_id}", pack)
    return links


def uploads_context(web: Web, session: Session, request: Request) -> dict[str, object]:
    """The submissions table's values: the uploads, and links to their validation games."""
    submissions = request.app.state.submissions
    found = view(web, session, submissions)
    # Each validating version's Position in the fair queue (state, place, estimate).
    queued = submissions.queue.snapshot() if submissions else {}
    return {
        "submissions": found,
        "checked": validation_links(web, session, found),
        "queued": queued,
    }


async def _form(request: Request) -> tuple[dict[str, str], UploadFile | None]:
    form = await request.form(max_files=1, max_fields=5)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    archive = form.get("archive")
    return fields, archive if isinstance(archive, UploadFile) else None


async def upload(request: Request) -> Response:
    web = web_of(request)
    session = require_session(request)
    submissions = request.app.state.submissions
    fields, archive = await _form(request)
    if not csrf_ok(request.cookies.get(CSRF_COOKIE), fields.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")
    if submissions is None:
        raise HTTPException(503, "uploads are not available on this server")
    data = await archive.read() if archive is not None else b""
    if not data:
        return await _page(request, web, session, "Choose an archive (.zip or .tar.gz) to upload.")
    name = fields.get("name", "").strip() or None
    try:
        info = await submissions.receive(session.player, data, name)
    except UploadRefused as exc:
        return await _page(request, web, session, str(exc))
    if str(info.status) == "validating":
        # The first check, then the full games in the fair queue (the table shows both).
        task = asyncio.create_task(submissions.check_and_queue(info))
        tasks: set[asyncio.Task[object]] = request.app.state.validations
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    return RedirectResponse("/me", status_code=303)


async def _page(request: Request, web: Web, session: Session, error: str) -> Response:
    context = await asyncio.to_thread(me_context, request, web, session)
    context["upload_error"] = error
    return web.render(request, "me.html", context, 422)


def me_context(request: Request, web: Web, session: Session) -> dict[str, object]:
    """The ``me`` page's template values."""
    context: dict[str, object] = dict(my_bots(web, session))
    context.update(uploads_context(web, session, request))
    context["upload_limit"] = upload_limit(request.app.state.submissions)
    context["upload_error"] = None
    return context


def submissions_fragment(request: Request) -> Response:
    """The submissions table alone (the page polls it while a validation runs)."""
    web = web_of(request)
    session = require_session(request)
    return web.render(request, "_submissions.html", uploads_context(web, session, request))


def me_page(request: Request) -> Response:
    web = web_of(request)
    session = web.session(request)
    if session is None:
        return RedirectResponse("/signin", status_code=303)
    return web.render(request, "me.html", me_context(request, web, session))
