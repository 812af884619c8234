"""The ASGI application: routes, error pages and the safety middleware."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from referee.live.hub import LiveHub
from referee.server import bounds
from referee.storage import Repository
from referee.telemetry import metrics
from referee.web import (
    account,
    api,
    explorer,
    instructor,
    lessons,
    live,
    packs,
    pages,
    sdk,
    uploads,
)
from referee.web.context import STATIC, Web, WebSettings, shared
from referee.web.security import BodyLimit, SecurityHeaders

if TYPE_CHECKING:
    from referee.submissions.service import Submissions


class IdConvertor(Convertor[int]):
    """A path's database id, ply or seat: ASCII digits within the database's range
    (:data:`referee.server.bounds.ID_PATTERN`). Anything else matches no route, so it is a 404
    like any unknown page, never a number the database cannot hold."""

    regex = bounds.ID_PATTERN

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("id", IdConvertor())


def routes() -> list[BaseRoute]:
    # shared(): read-only pages without a form, served to anonymous readers from one copy.
    return [
        Route("/", pages.home),
        Route("/healthz", healthz),
        Route("/sdk", sdk.sdk_page),
        Route("/sdk/{name}", sdk.sdk_file, name="sdk_file"),
        Route("/api/sdk", sdk.sdk_api),
        Route("/leaderboard/{game}", shared(pages.leaderboard)),
        Route("/tournaments", shared(pages.tournaments)),
        Route("/tournaments/{tid:id}", shared(pages.tournament)),
        Route("/bots/{bot_id:id}", shared(pages.bot)),
        Route("/bots/{bot_id:id}/vs/{other_id:id}", shared(pages.versus)),
        Route("/bots/{bot_id:id}/lessons", lessons.bot_lessons),
        Route("/games", shared(pages.games)),
        Route("/explorer/{game}", explorer.explorer_page),
        Route("/api/explorer/{game}", explorer.explorer_api),
        Route("/games/{game_id:id}", shared(pages.game_page, stored_game=True)),
        Route("/games/uid/{uid}", pages.game_by_uid),
        Route("/games/{game_id:id}/ply/{ply:id}", shared(pages.game_ply, stored_game=True)),
        Route("/games/{game_id:id}/record.{kind:str}", pages.game_download),
        Route("/games/{game_id:id}/pack/{seat:id}", packs.pack_download),
        Route("/live", live.live_list),
        Route("/live/{uid}", live.live_game),
        Route("/live/{uid}/events", live.events),
        Route("/signin", account.signin_page, methods=["GET"]),
        Route("/signin", account.signin, methods=["POST"]),
        Route("/signout", account.signout, methods=["POST"]),
        Route("/me", uploads.me_page),
        Route("/instructor/grades", instructor.grades),
        Route("/instructor/grades.csv", instructor.grades_csv),
        Route("/instructor/similarity", instructor.similarity),
        Route("/instructor/lessons", lessons.class_mistakes),
        Route("/instructor/queue", instructor.queue),
        Route("/me/submissions", uploads.submissions_fragment),
        Route("/me/upload", uploads.upload, methods=["POST"]),
        Route("/api/leaderboard/{game}", api.leaderboard),
        Route("/api/tournaments", api.tournaments),
        Route("/api/tournaments/{tid:id}", api.tournament),
        Route("/api/bots/{bot_id:id}", api.bot),
        Route("/api/bots/{bot_id:id}/vs/{other_id:id}", api.versus),
        Route("/api/games", api.games),
        Route("/api/games/{game_id:id}", api.game),
        Route("/api/live", api.live),
        Route("/api/live/{uid}", api.live_game),
        Route("/api/me", api.me),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]


def healthz(request: Request) -> Response:
    """``ok``, or 503 naming the loops of this process that cannot reach the database now."""
    down = metrics.database_down()
    if down:
        return PlainTextResponse(f"database unreachable ({', '.join(down)})\n", 503)
    return PlainTextResponse("ok\n")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": exc.detail, "status": exc.status_code}, exc.status_code)
    web: Web = request.app.state.web
    return web.render(
        request, "error.html", {"status": exc.status_code, "detail": exc.detail}, exc.status_code
    )


async def server_error(request: Request, exc: Exception) -> Response:
    # Never a traceback in a page: the detail goes to the operator's log only.
    from referee.telemetry.logs import get_logger

    get_logger("referee.web").exception("page_failed", path=request.url.path)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": "internal error", "status": 500}, 500)
    return PlainTextResponse("internal error\n", 500)


def create_app(
    repo: Repository | None,
    hub: LiveHub | None = None,
    settings: WebSettings | None = None,
    *,
    submissions: Submissions | None = None,
) -> Starlette:
    """The web front over ``repo`` (``None``: live games only), following ``hub``.

    ``submissions`` is the upload store (see :mod:`referee.web.uploads`); without it the
    upload form says uploads are not available here.
    """
    web = Web(repo, hub or LiveHub(), settings)
    middleware = [
        # Pages and records compressed (the SSE stream is left alone by the middleware), at
        # zlib's default level rather than Starlette's 9: less CPU a page, barely larger.
        Middleware(GZipMiddleware, minimum_size=1024, compresslevel=6),
        Middleware(SecurityHeaders),
        Middleware(
            BodyLimit,
            limit=web.settings.max_form_bytes,
            upload_limit=uploads.upload_limit(submissions) or web.settings.max_upload_bytes,
        ),
    ]
    app = Starlette(
        routes=routes(),
        middleware=middleware,
        exception_handlers={HTTPException: http_error, 500: server_error},
    )
    app.state.web = web
    app.state.spectators = live.Spectators(live.EventCache())
    app.state.signin_limiter = account.SigninLimiter()
    app.state.submissions = submissions
    app.state.validations = set()
    #: The referee's gRPC port when it serves beside this front (for the /sdk quick start).
    app.state.referee_port = None
    return app
