"""A game page's links to the failure packs the signed-in reader may have, and their download
(``/games/ID/pack/SEAT``): a pack is its bot owner's and the staff's, like its output
(:mod:`referee.storage.readers`)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.storage import GameDetail, readers
from referee.web.context import Web, web_of
from referee.web.pages import load_game_view
from referee.web.replay import GameView


def _may_read(web: Web, request: Request, view: GameView, seat: int) -> bool:
    """Whether the signed-in reader may have the seat's pack: its bot's owner, or staff."""
    me = web.session(request)
    if me is None:
        return False
    player = view.players[seat] if 0 <= seat < len(view.players) else None
    return readers.may_read_seat(me.role, player is not None and player.owner_id == me.player_id)


def own_packs(
    web: Web, request: Request, view: GameView, detail: GameDetail
) -> list[tuple[str, str]]:
    """(seat name, download path) of each faulted seat the signed-in reader may have (their
    own bots'; every one for staff)."""
    return [
        (view.seat_names[seat], f"/games/{view.summary.id}/pack/{seat}")
        for seat, pack in enumerate(detail.failure_packs)
        if pack and _may_read(web, request, view, seat)
    ]


def pack_download(request: Request) -> Response:
    """The pack of one seat, for its bot's owner and staff; 404 for anyone else (as if there
    were none)."""
    web = web_of(request)
    game_id = request.path_params["game_id"]
    seat = request.path_params["seat"]
    view, detail = load_game_view(web, game_id, request)
    packs = detail.failure_packs
    if not (0 <= seat < len(packs) and packs[seat] and _may_read(web, request, view, seat)):
        raise HTTPException(404, f"game {game_id} has no failure pack of yours at seat {seat}")
    name = f"game-{game_id}.{view.seat_names[seat].lower()}.failure.json"
    return Response(
        packs[seat] or "",
        media_type="application/json",
        headers={
            "content-disposition": f'attachment; filename="{name}"',
            "cache-control": "private, no-store",
        },
    )
