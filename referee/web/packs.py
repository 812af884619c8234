"""A game page's links to the failure packs the signed-in reader may have, and their download
(``/games/ID/pack/SEAT``): a pack is its bot owner's and the staff's, like its output
(:mod:`referee.storage.readers`)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.storage import GameDetail, readers
from referee.web.context import Web, referee_server, web_of
from referee.web.gamepage import load_game_view
from referee.web.replay import GameView


def _may_read(web: Web, request: Request, view: GameView, seat: int) -> bool:
    """Whether the signed-in reader may have the seat's pack: its bot's owner, or staff."""
    me = web.session(request)
    if me is None:
        return False
    player = view.players[seat] if 0 <= seat < len(view.players) else None
    return readers.may_read_seat(me.role, player is not None and player.owner_id == me.player_id)


@dataclass(frozen=True, slots=True)
class PackLink:
    """A faulted seat's pack as the page offers it: the download, and the SDK's commands that
    replay it on the reader's laptop (from the file, or fetched by the game's id)."""

    seat_name: str
    href: str
    file_name: str
    from_file: str
    from_server: str


def pack_file_name(game_id: int, seat_name: str) -> str:
    return f"game-{game_id}.{seat_name.lower()}.failure.json"


def own_packs(web: Web, request: Request, view: GameView, detail: GameDetail) -> list[PackLink]:
    """The pack of each faulted seat the signed-in reader may have (their own bots'; every
    one for staff)."""
    game_id = view.summary.id
    server = referee_server(request)
    links = []
    for seat, pack in enumerate(detail.failure_packs):
        if not (pack and _may_read(web, request, view, seat)):
            continue
        name = view.seat_names[seat]
        file_name = pack_file_name(game_id, name)
        reproduce = "python -m client_sdk reproduce"
        by_id = detail.summary.uid or str(game_id)
        fetch = f"--server {server} --token-file token.txt"
        player = view.players[seat] if seat < len(view.players) else None
        if player is not None and player.command:
            # A C++ or JavaScript bot: the SDK replays the pack over gRPC to its command.
            shown = (f"{file_name} -- YOUR_BOT_COMMAND", f"{by_id} {fetch} -- YOUR_BOT_COMMAND")
        else:
            shown = (f"{file_name} YOUR_BOT", f"{by_id} YOUR_BOT {fetch}")
        href = f"/games/{game_id}/pack/{seat}"
        links.append(
            PackLink(name, href, file_name, f"{reproduce} {shown[0]}", f"{reproduce} {shown[1]}")
        )
    return links


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
    name = pack_file_name(game_id, view.seat_names[seat])
    return Response(
        packs[seat] or "",
        media_type="application/json",
        headers={
            "content-disposition": f'attachment; filename="{name}"',
            "cache-control": "private, no-store",
        },
    )
