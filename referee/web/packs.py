"""A game page's link to the signed-in student's own failure pack, and its download
(``/games/ID/pack/SEAT``): the pack is its bot owner's alone, like its output."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.storage import GameDetail
from referee.web.context import Web, web_of
from referee.web.pages import load_game_view
from referee.web.replay import GameView


def _owns(web: Web, request: Request, view: GameView, seat: int) -> bool:
    me = web.session(request)
    player = view.players[seat] if 0 <= seat < len(view.players) else None
    return me is not None and player is not None and player.owner_id == me.player_id


def own_packs(
    web: Web, request: Request, view: GameView, detail: GameDetail
) -> list[tuple[str, str]]:
    """(seat name, download path) of each faulted seat of the signed-in student's bots."""
    return [
        (view.seat_names[seat], f"/games/{view.summary.id}/pack/{seat}")
        for seat, pack in enumerate(detail.failure_packs)
        if pack and _owns(web, request, view, seat)
    ]


def pack_download(request: Request) -> Response:
    """The pack of one seat, for its bot's owner; 404 for anyone else (as if there were none)."""
    web = web_of(request)
    game_id = request.path_params["game_id"]
    seat = request.path_params["seat"]
    view, detail = load_game_view(web, game_id, request)
    packs = detail.failure_packs
    if not (0 <= seat < len(packs) and packs[seat] and _owns(web, request, view, seat)):
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
