"""What every route needs: storage, the live hub, caches, settings and page rendering."""

from __future__ import annotations

import functools
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.analysis.gameeval import Analyst, store_analysis
from referee.analysis.lessonbook import LessonBook
from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.web.pagecache import Handler, PageCache, unmarked
from referee.web.replay import ViewCache, format_clock
from referee.web.security import Session, Signer, new_csrf_token
from referee.web.tables import PROVISIONAL_GAMES, Tables
from referee.web.thinking import PublishThinking

if TYPE_CHECKING:
    from referee.web.pagedata import BotData

V = TypeVar("V")
HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"
#: The environment variable holding the session-signing secret; without it a random secret is
#: drawn at start (sessions then end when the process does).
SECRET_ENV = "ARENA_WEB_SECRET"
DEFAULT_PORT = 8080
DEFAULT_ADDRESS = f"127.0.0.1:{DEFAULT_PORT}"


@dataclass(frozen=True, slots=True)
class WebSettings:
    #: Signs session cookies; at least 16 bytes.
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    #: ``None``: cookies are ``Secure`` when the request came over HTTPS; ``True``: always.
    secure_cookies: bool | None = None
    session_hours: float = 12.0
    #: Largest request body (sign-in and other forms), and largest bot upload.
    max_form_bytes: int = 64 * 1024
    max_upload_bytes: int = 2 * 1024 * 1024
    #: How often (seconds) the tables check whether a game was stored.
    refresh_s: float = 1.0
    #: Seconds a bot page's data (the same for every visitor) is reused: under a class's
    #: refreshes, one computation serves all of a bot's readers for that long.
    page_data_s: float = 2.0
    #: Seconds a whole page is served to every anonymous reader before it is rendered again
    #: (:mod:`referee.web.pagecache`).
    page_cache_s: float = 2.0
    #: The same for a stored game's page (it changes only when its reference evaluation
    #: arrives or its tournament closes).
    game_page_cache_s: float = 30.0
    #: Seconds past its interval a kept page may still be sent, to a reader whose request
    #: then renders it again.
    page_stale_s: float = 60.0
    #: Who besides a bot's owner and instructors sees its think records (``--publish-thinking``).
    publish_thinking: PublishThinking = PublishThinking.AFTER_CLOSE
    #: Where games' reference evaluations are computed: ``process`` (a child process at low
    #: priority, the default), ``thread`` (in this process: tests, small installs) or ``off``.
    analysis: str = "process"

    @classmethod
    def from_env(cls, **overrides: Any) -> WebSettings:
        secret = os.environ.get(SECRET_ENV)
        if secret:
            overrides.setdefault("secret", secret.encode())
        return cls(**overrides)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(("html", "svg"), default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["clock"] = format_clock
    env.filters["num"] = lambda v, d=0: "—" if v is None else f"{v:.{d}f}"
    env.globals["provisional_games"] = PROVISIONAL_GAMES
    env.filters["when"] = lambda t: t.strftime("%Y-%m-%d %H:%M") if t else "—"
    return env


class Web:
    """The web front's state: one per app."""

    def __init__(
        self, repo: Repository | None, hub: LiveHub, settings: WebSettings | None = None
    ) -> None:
        self.repo = repo
        self.hub = hub
        self.settings = settings or WebSettings.from_env()
        self.signer = Signer(self.settings.secret)
        self.tables = Tables(repo, self.settings.refresh_s) if repo is not None else None
        self.views = ViewCache()
        #: Reference evaluations of stored games, computed in the background.
        self.analyst = Analyst(
            store=self._store_analysis if repo is not None else None,
            mode=self.settings.analysis,
        )
        #: Lessons of stored games (from the analyses above), cached per game seat.
        self.lessons = LessonBook(repo, self.analyst) if repo is not None else None
        #: Rendered leaderboard tables by (snapshot, game, order).
        self.fragments: Lru[Any] = Lru(32)
        #: Bot pages' data by bot id, for ``page_data_s`` seconds.
        self.bot_pages: Fresh[BotData] = Fresh(self.settings.page_data_s)
        #: Whole pages for anonymous readers, for ``page_cache_s`` seconds.
        self.pages = PageCache(self.settings.page_cache_s, self.settings.page_stale_s)
        self.env = _environment()

    def _store_analysis(self, game_id: int, data: Mapping[str, object]) -> None:
        """Keep a finished analysis in the game's stored JSON record (computed once)."""
        store_analysis(self.need_repo(), game_id, data)

    def need_repo(self) -> Repository:
        if self.repo is None:
            raise HTTPException(503, "this server has no database (start it with --db)")
        return self.repo

    def need_tables(self) -> Tables:
        self.need_repo()
        assert self.tables is not None
        return self.tables

    def session(self, request: Request) -> Session | None:
        return self.signer.read_session(request.cookies.get(SESSION_COOKIE))

    def secure(self, request: Request) -> bool:
        flag = self.settings.secure_cookies
        return flag if flag is not None else request.url.scheme == "https"

    def render(
        self, request: Request, template: str, context: Mapping[str, object], status: int = 200
    ) -> HTMLResponse:
        """A page (or an htmx fragment) with the signed-in student and the CSRF token.

        The visitor's CSRF cookie is set (when they have none yet) only by a page whose forms
        carry the token: a page without a form is the same for every anonymous visitor, so
        it can be shared (:mod:`referee.web.pagecache`)."""
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        fresh = len(csrf) < 16
        if fresh:
            csrf = new_csrf_token()
        values = {
            "request": request,
            "me": self.session(request),
            "csrf": csrf,
            "games_nav": self._games_nav(),
            **context,
        }
        html = self.env.get_template(template).render(values)
        response = HTMLResponse(html, status_code=status)
        response.headers["cache-control"] = "no-store"
        # A fresh token is random (32 characters): the page holds it only in a form's field.
        if fresh and csrf in html:
            response.set_cookie(
                CSRF_COOKIE,
                csrf,
                httponly=True,
                samesite="strict",
                secure=self.secure(request),
                path="/",
            )
        return response

    def _games_nav(self) -> list[str]:
        from engine.registry import game_names
        from referee.web.tables import GAME_ORDER

        names = game_names()
        return [g for g in GAME_ORDER if g in names] + sorted(
            g for g in names if g not in GAME_ORDER
        )


class Lru(Generic[V]):
    """A small thread-safe least-recently-used map (page handlers run in worker threads)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class Fresh(Generic[V]):
    """Values kept for ``seconds`` after they were made, the most recent ``size`` of them
    (thread-safe; an exception is not kept). ``clock`` is for tests."""

    def __init__(
        self, seconds: float, size: int = 512, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self._items: Lru[tuple[float, V]] = Lru(size)

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept for ``key`` while fresh, else ``make()``'s (then kept)."""
        found = self._items.get(key)
        if found is not None and self.clock() < found[0]:
            return found[1]
        value = make()
        self._items.put(key, (self.clock() + self.seconds, value))
        return value


#: The referee's default port: a command naming it needs no port in --server.
DEFAULT_REFEREE_PORT = 50051


def referee_server(request: Request) -> str:
    """The referee's address as a student's ``--server`` names it: this page's host, and the
    referee's port when it is not the default one."""
    host = request.url.hostname or "HOST"
    port = getattr(request.app.state, "referee_port", None) or DEFAULT_REFEREE_PORT
    return host if port == DEFAULT_REFEREE_PORT else f"{host}:{port}"


def web_of(request: Request) -> Web:
    web: Web = request.app.state.web
    return web


def shared(
    handler: Handler, *, stored_game: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """``handler``'s pages (a read-only page with no form) served to anonymous readers from
    the web's page cache (for ``game_page_cache_s`` when ``stored_game``); a signed-in
    reader's (and any other method's) rendered for them."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        web = web_of(request)
        if request.method not in ("GET", "HEAD") or web.session(request) is not None:
            return unmarked(await run_in_threadpool(handler, request))
        seconds = web.settings.game_page_cache_s if stored_game else None
        return await web.pages.serve(request, handler, seconds)

    return endpoint


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A bounded integer query parameter; anything else is a 400, not a crash."""
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise HTTPException(400, f"{name} must be a whole number") from None
    if not low <= value <= high:
        raise HTTPException(400, f"{name} must be between {low} and {high}")
    return value
