"""``/sdk``: the class server hands out its own SDK, the exact wheel of the running version
(see :mod:`referee.tools.sdkwheel`), with its SHA-256, the ``pip install`` line, the protocol
version and a quick start. ``/sdk/<wheel>`` is the file itself; ``/api/sdk`` the same facts
as JSON."""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from referee.server.app import PROTOCOL_VERSION, SERVER_VERSION
from referee.tools.sdkwheel import Wheel, WheelError, sdk_wheel
from referee.web.context import Web, referee_server


async def _wheel() -> Wheel:
    """The wheel, built in a thread the first time (later calls find it in the cache)."""
    try:
        return await asyncio.to_thread(sdk_wheel)
    except WheelError as exc:
        raise HTTPException(503, f"the SDK is not available here: {exc}") from None


def _facts(request: Request, wheel: Wheel) -> dict[str, object]:
    url = str(request.url_for("sdk_file", name=wheel.name))
    server = referee_server(request)
    return {
        "wheel": wheel.name,
        "url": url,
        "size": wheel.size,
        "sha256": wheel.sha256,
        "pip": f"pip install {url}",
        "protocol_version": PROTOCOL_VERSION,
        "server_version": SERVER_VERSION,
        "server": server,
    }


async def sdk_page(request: Request) -> Response:
    web: Web = request.app.state.web
    facts = _facts(request, await _wheel())
    return web.render(request, "sdk.html", {"sdk": facts})


async def sdk_api(request: Request) -> Response:
    return JSONResponse(_facts(request, await _wheel()))


async def sdk_file(request: Request) -> Response:
    wheel = await _wheel()
    if request.path_params["name"] != wheel.name:
        raise HTTPException(404, f"this server serves {wheel.name}")
    return FileResponse(
        wheel.path,
        media_type="application/octet-stream",
        filename=wheel.name,
        headers={"X-Content-SHA256": wheel.sha256},
    )
