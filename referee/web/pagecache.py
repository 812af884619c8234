"""Whole pages shared by every anonymous reader: rendered and compressed once per short interval.

Under a class's refreshes most readers are not signed in and read the same few pages; for
them a page is rendered once per interval (:attr:`WebSettings.page_cache_s`, longer for a
stored game's page), compressed once, and then served from memory on the event loop, with an
ETag so that a browser's copy is answered with a bodiless 304. What keeps it correct:

- only GET and HEAD requests without a valid session are served from it (a signed-in
  student's pages are rendered for them every time, as before);
- the page kept is rendered from the request *without its cookies* (and without its
  conditional headers), so it cannot hold any visitor's session, name or CSRF token; a page
  that sets a cookie anyway (one with a form sets the CSRF cookie,
  :meth:`~referee.web.context.Web.render`) or is not a 200 is never kept;
- it is keyed by the host, path, query and the htmx headers a page reads;
- a page that is about to change (a stored game's page while its reference evaluation is
  computed) is marked by its handler (:func:`briefly`) and kept only for the short interval;
- staleness is bounded: a page is served as kept for its interval; for ``stale_s`` more it
  is still served once more, to a reader whose request then renders it again after its
  answer is sent (so that no reader waits for a render of a page others read); older, the
  reader waits for a new render. A page served is at most interval + ``stale_s`` old;
- only one render per page is in flight: readers arriving meanwhile wait for it.

Everything runs on the event loop but the render and the compression, which go to a worker
thread as every page handler does.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from referee.web.validators import etag_of

#: Bodies this small are sent as they are (as the gzip middleware does).
GZIP_MINIMUM = 1024
#: Pages kept, least recently used out first (kept compressed: a few MB).
KEPT_PAGES = 1024
#: Request headers a kept page depends on besides its URL (the htmx fragment switches).
KEYED_HEADERS = (b"host", b"hx-request", b"hx-history-restore-request")
#: Request headers left out when a page to keep is rendered.
PERSONAL_HEADERS = frozenset((b"cookie", b"if-none-match", b"if-modified-since", b"authorization"))
#: A header a handler sets on a page to be kept only for the cache's short interval, not its
#: route's (a stored game's page while its reference evaluation is being computed); it is
#: never sent.
BRIEFLY = "x-kept-briefly"
#: Response headers a kept page does not repeat as they were (they are set per answer).
PER_ANSWER = frozenset(
    ("content-length", "content-encoding", "etag", "vary", "set-cookie", BRIEFLY)
)
VARY = "Cookie, Accept-Encoding"

Handler = Callable[[Request], Response]


@dataclass(frozen=True, slots=True)
class Kept:
    """A page as every anonymous reader gets it."""

    status: int
    #: Its headers but the per-answer ones, with ``cache-control`` as readers get it.
    headers: tuple[tuple[str, str], ...]
    #: The body, gzip-compressed when ``compressed`` (then decompressed for the rare reader
    #: that does not accept gzip).
    body: bytes
    compressed: bool
    etag: str
    expires: float


def briefly(response: Response) -> Response:
    """``response``, to be kept only for the cache's short interval (:data:`BRIEFLY`)."""
    response.headers[BRIEFLY] = "1"
    return response


def unmarked(response: Response) -> Response:
    """``response`` without :data:`BRIEFLY`, as it is sent when not kept."""
    if BRIEFLY in response.headers:
        del response.headers[BRIEFLY]
    return response


def keep(response: Response, seconds: float, now: float, brief_s: float = 0.0) -> Kept | None:
    """``response`` as a page to keep for ``seconds`` (``brief_s`` when marked
    :data:`BRIEFLY`), or ``None`` when it may not be shared."""
    if response.status_code != 200 or "set-cookie" in response.headers:
        return None
    if BRIEFLY in response.headers:
        seconds = min(seconds, brief_s)
    if not isinstance(response.body, bytes | memoryview):
        return None
    body = bytes(response.body)
    headers = [(k, v) for k, v in response.headers.items() if k not in PER_ANSWER]
    headers = [(k, v) for k, v in headers if k != "cache-control"]
    # A page for everyone, revalidated on every visit (no-store would forbid the 304s).
    control = response.headers.get("cache-control", "no-store")
    headers.append(("cache-control", "no-cache" if "no-store" in control else control))
    compressed = len(body) >= GZIP_MINIMUM
    if compressed:
        body = gzip.compress(body, compresslevel=6, mtime=0)
    etag = etag_of(bytes(response.body))
    return Kept(response.status_code, tuple(headers), body, compressed, etag, now + seconds)


def answer(request: Request, kept: Kept) -> Response:
    """The kept page for this reader: a 304 on a matching ETag, else the body in an
    encoding the reader accepts."""
    headers = dict(kept.headers)
    headers["etag"] = kept.etag
    headers["vary"] = VARY
    match = request.headers.get("if-none-match")
    if match is not None:
        offered = {t.strip().removeprefix("W/") for t in match.split(",")}
        if "*" in offered or kept.etag.removeprefix("W/") in offered:
            headers.pop("content-type", None)
            return Response(status_code=304, headers=headers)
    body = kept.body
    if kept.compressed:
        if "gzip" in request.headers.get("accept-encoding", ""):
            headers["content-encoding"] = "gzip"
        else:
            body = gzip.decompress(body)
    return Response(body, status_code=kept.status, headers=headers)


def anonymous(request: Request) -> Request:
    """The same request with nothing of its visitor: no cookies, no conditional headers."""
    scope = dict(request.scope)
    scope["headers"] = [(k, v) for k, v in request.scope["headers"] if k not in PERSONAL_HEADERS]
    return Request(scope)


class PageCache:
    """Pages kept for anonymous readers (see the module's docstring); ``clock`` is for tests.
    Used on one event loop only."""

    def __init__(
        self,
        seconds: float,
        stale_s: float = 0.0,
        size: int = KEPT_PAGES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.stale_s = stale_s
        self.size = size
        self.clock = clock
        self._kept: OrderedDict[Hashable, Kept] = OrderedDict()
        self._filling: dict[Hashable, asyncio.Future[Kept | None]] = {}
        #: Renders made to fill it (tests count them).
        self.renders = 0

    async def serve(
        self, request: Request, handler: Handler, seconds: float | None = None
    ) -> Response:
        """``handler``'s page for this anonymous ``request``: the kept one while fresh; past
        that and for ``stale_s`` more, still the kept one, rendered again once it is sent;
        else rendered now (one render per page at a time, others wait for it)."""
        key = cache_key(request)
        seconds = self.seconds if seconds is None else seconds
        kept = self._kept.get(key)
        now = self.clock()
        if kept is not None:
            self._kept.move_to_end(key)
            if now < kept.expires:
                return answer(request, kept)
            if now < kept.expires + self.stale_s:
                response = answer(request, kept)
                response.background = BackgroundTask(
                    self._refresh, key, anonymous(request), handler, seconds
                )
                return response
        filling = self._filling.get(key)
        if filling is not None:
            made = await asyncio.shield(filling)
            if made is not None:
                return answer(request, made)
            return unmarked(await run_in_threadpool(handler, request))
        future = self._start(key)
        response, made = await self._fill(key, future, anonymous(request), handler, seconds)
        return unmarked(response) if made is None else answer(request, made)

    async def _refresh(
        self, key: Hashable, request: Request, handler: Handler, seconds: float
    ) -> None:
        """Render a kept page again after a reader was sent its older copy (unless another
        reader's render is under way or done); a failure (a page gone meanwhile) is the next
        reader's to see, not an error of a request already answered."""
        kept = self._kept.get(key)
        if key in self._filling or (kept is not None and self.clock() < kept.expires):
            return
        with contextlib.suppress(Exception):
            await self._fill(key, self._start(key), request, handler, seconds)

    def _start(self, key: Hashable) -> asyncio.Future[Kept | None]:
        future: asyncio.Future[Kept | None] = asyncio.get_running_loop().create_future()
        self._filling[key] = future
        return future

    async def _fill(
        self,
        key: Hashable,
        future: asyncio.Future[Kept | None],
        request: Request,
        handler: Handler,
        seconds: float,
    ) -> tuple[Response, Kept | None]:
        made: Kept | None = None
        try:
            response, made = await run_in_threadpool(self._render, handler, request, seconds)
        except BaseException:
            self._kept.pop(key, None)  # a page that fails now is not served from before
            raise
        finally:
            # Waiters render for themselves when this render failed or was cancelled.
            self._filling.pop(key, None)
            future.set_result(made)
        if made is None:
            self._kept.pop(key, None)
        else:
            self._kept[key] = made
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return response, made

    def _render(
        self, handler: Handler, request: Request, seconds: float
    ) -> tuple[Response, Kept | None]:
        self.renders += 1
        response = handler(request)
        return response, keep(response, seconds, self.clock(), self.seconds)


def cache_key(request: Request) -> Hashable:
    headers = request.scope["headers"]
    keyed = tuple(sorted((k, v) for k, v in headers if k in KEYED_HEADERS))
    return (request.scope["path"], request.scope.get("query_string", b""), keyed)
