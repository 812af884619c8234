"""The read-only pages: leaderboards, tournaments, bots and games (with their htmx fragments).

Handlers are plain functions: Starlette runs them in its worker threads, so database reads and
template rendering never hold the event loop the referee plays games on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from engine.registry import game_names, load_game
from referee.storage import GameDetail, NotFoundError, Repository, TournamentInfo, readers
from referee.storage.browse import GameLine, VersionName, recent_games, source_kinds
from referee.storage.enums import SourceKind
from referee.tournament import schedule
from referee.tournament.adaptive import DEFAULT_CONFIDENCE
from referee.tournament.standings import standings
from referee.web.botstory import bot_games, head_to_head, matchups, time_profiles
from referee.web.context import Web, int_param, web_of
from referee.web.gamepage import Extras, extras, load_game_view, pv_of, reported_error
from referee.web.packs import own_packs
from referee.web.pagecache import briefly
from referee.web.pagedata import BotData, BotGameData, Progress, TournamentData, VersusData
from referee.web.plots import VersionLine, versions_plot
from referee.web.replay import GameView
from referee.web.tables import BoardRow, GameTable, Snapshot, results_by_opponent
from referee.web.thinking import (
    hidden_json,
    hidden_text,
    settled_for_everyone,
    tournament_status,
    visible_seats,
)
from referee.web.validators import validated

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

SORTS: dict[str, Callable[[BoardRow], SupportsRichComparison]] = {
    # Ranks count within a connected group: the groups stay apart, group 1 first.
    "rank": lambda r: (r.row.group, r.row.rank),
    "bot": lambda r: r.version.display.lower(),
    "rating": lambda r: (r.row.group, -(r.row.elo if r.row.elo is not None else float("-inf"))),
    "games": lambda r: -r.row.games,
    "score": lambda r: -(r.row.score_pct if r.row.score_pct is not None else -1.0),
}


def known_game(name: str) -> str:
    if name not in game_names():
        raise HTTPException(404, f"no game {name!r}")
    return name


def sorted_rows(request: Request, table: GameTable | None) -> tuple[list[BoardRow], str, str]:
    sort = request.query_params.get("sort", "rank")
    direction = request.query_params.get("dir", "asc")
    if sort not in SORTS or direction not in ("asc", "desc"):
        raise HTTPException(400, "sort is one of rank, bot, rating, games, score; dir asc or desc")
    rows = list(table.rows) if table else []
    rows.sort(key=SORTS[sort], reverse=direction == "desc")
    return rows, sort, direction


def snapshot(web: Web) -> Snapshot:
    return web.need_tables().snapshot()


def home(request: Request) -> Response:
    return RedirectResponse("/leaderboard/tetress", status_code=302)


def leaderboard(request: Request) -> Response:
    web = web_of(request)
    game = known_game(request.path_params["game"])
    snap = snapshot(web)
    table = snap.tables.get(game)
    sort = request.query_params.get("sort", "rank")
    direction = request.query_params.get("dir", "asc")
    # The table is the same for everyone until a game is stored: render it once per snapshot
    # and order, and put it in each page (which adds the visitor's own header).
    key = (id(snap), snap.built_at, game, sort, direction)
    board_html = web.fragments.get(key)
    if board_html is None:
        rows, sort, direction = sorted_rows(request, table)
        context: dict[str, object] = {"game": game, "table": table, "rows": rows}
        context |= {"sort": sort, "dir": direction, "same_author": snap.same_author()}
        board_html = Markup(web.env.get_template("_board_rows.html").render(context))
        web.fragments.put(key, board_html)
    fragment = request.headers.get("hx-request") == "true" and "hx-history-restore-request" not in (
        request.headers
    )
    if fragment:
        return HTMLResponse(board_html, headers={"cache-control": "no-store"})
    page: dict[str, object] = {"game": game, "table": table, "board_html": board_html}
    page["snap"] = snap
    return web.render(request, "leaderboard.html", page)


# ------------------------------------------------------------------------ tournaments


def tournaments(request: Request) -> Response:
    web = web_of(request)
    repo = web.need_repo()
    items = [(t, _progress(web, t)) for t in repo.list_tournaments()]
    items.reverse()
    return web.render(request, "tournaments.html", {"items": items})


def _progress(web: Web, t: TournamentInfo) -> Progress:
    repo = web.need_repo()
    state = repo.tournament_state(t.id)
    try:
        planned = schedule.total_games_planned(t, len(repo.tournament_entrants(t.id)))
    except ValueError:
        planned = 0
    planned = max(planned, state.games_finished + state.games_remaining)
    return Progress(state.games_finished, state.games_remaining, planned, len(state.running))


def find_tournament(web: Web, key: int) -> TournamentInfo:
    try:
        return web.need_repo().get_tournament(key)
    except NotFoundError:
        raise HTTPException(404, f"no tournament {key}") from None


def tournament_data(web: Web, key: int) -> TournamentData:
    t = find_tournament(web, key)
    st = standings(web.need_repo(), t.id)
    names = snapshot(web).names
    by_label = {label: names.get(v.id) for label, v in st.versions.items()}
    players = [r.player for r in st.board.rows]
    confidence = None
    if t.settings.format == "adaptive":
        confidence = float(t.settings.options.get("confidence", DEFAULT_CONFIDENCE))
    return {
        "t": t,
        "board": st.board,
        "players": players,
        "names": by_label,
        "progress": _progress(web, t),
        "order": st.board.adjacent_los(),
        "confidence": confidence,
    }


def tournament(request: Request) -> Response:
    web = web_of(request)
    data = tournament_data(web, request.path_params["tid"])
    fragment = request.headers.get("hx-request") == "true"
    return web.render(request, "_progress.html" if fragment else "tournament.html", data)


# ------------------------------------------------------------------------------- bots


def bot_data(web: Web, bot_id: int) -> BotData:
    repo = web.need_repo()
    snap = snapshot(web)
    versions = sorted(
        (v for v in snap.names.values() if v.bot_id == bot_id), key=lambda v: v.id, reverse=True
    )
    if not versions:
        raise HTTPException(404, f"no bot {bot_id}")
    ids = {v.id for v in versions}
    full = {v.id: v for v in repo.list_bot_versions(versions[0].bot)}
    uploads = [(v.version, full[v.id].created_at) for v in versions if v.id in full]
    played = bot_games(repo, sorted(ids))
    per_game: list[BotGameData] = []
    for game in snap.ordered_games():
        table = snap.tables[game]
        rows = [r for r in (table.row_of(v.id) for v in versions) if r is not None]
        if not rows:
            continue
        series = [
            VersionLine(v.version, table.history.get(v.id, ()), _elo(table.row_of(v.id)))
            for v in versions
        ]
        mine = [g for g in played if g.game == game]
        per_game.append(
            {
                "game": game,
                "rows": rows,
                "plot": versions_plot(series, uploads),
                "opponents": results_by_opponent(table, ids, snap.names),
                "matchups": matchups(mine, snap.names),
                "profiles": time_profiles(mine, versions),
            }
        )
    recent = recent_games(repo, sorted(ids), limit=30)
    return {
        "bot": versions[0],
        "versions": [(v, full.get(v.id)) for v in versions],
        "per_game": per_game,
        "recent": recent,
        "names": snap.names,
        "same_author": _kinds(repo, snap.same_author().get(bot_id, [])),
    }


def _elo(row: BoardRow | None) -> float | None:
    return row.row.elo if row is not None else None


def _kinds(repo: Repository, versions: Sequence[VersionName]) -> list[tuple[VersionName, str]]:
    """Each version with ``remote`` for a bot that connects from its author's machine, else
    ``uploaded`` (one query for all)."""
    kinds = source_kinds(repo, [v.id for v in versions])
    remote = SourceKind.REMOTE
    return [(v, "remote" if kinds.get(v.id, remote) is remote else "uploaded") for v in versions]


def bot(request: Request) -> Response:
    web = web_of(request)
    bot_id = request.path_params["bot_id"]
    data = web.bot_pages.get(bot_id, lambda: bot_data(web, bot_id))
    return web.render(request, "bot.html", data)


def versus_data(web: Web, bot_id: int, other_id: int) -> VersusData:
    """Every game between two bots, from the first bot's side."""
    names = snapshot(web).names
    mine = sorted((v for v in names.values() if v.bot_id == bot_id), key=lambda v: v.id)
    theirs = sorted((v for v in names.values() if v.bot_id == other_id), key=lambda v: v.id)
    if not mine or not theirs:
        raise HTTPException(404, "no such bot")
    if bot_id == other_id:
        raise HTTPException(404, "a bot has no head to head with itself: pick another bot")
    played = bot_games(web.need_repo(), [v.id for v in mine])
    h2h = head_to_head(played, [v.id for v in theirs])
    game = h2h.games[0].game if h2h.games else "tetress"
    seats = load_game(game).seat_names
    return {
        "a": mine[-1],
        "b": theirs[-1],
        "a_versions": mine,
        "b_versions": theirs,
        "h2h": h2h,
        "names": names,
        "seat_names": list(enumerate(seats)),
    }


def versus(request: Request) -> Response:
    web = web_of(request)
    data = versus_data(web, request.path_params["bot_id"], request.path_params["other_id"])
    return web.render(request, "versus.html", data)


# ------------------------------------------------------------------------------ games


def recent(
    web: Web, request: Request
) -> tuple[str | None, list[GameLine], Mapping[int, VersionName]]:
    """The games list's choice (``?game=``, ``?limit=``), its games and their players' names:
    the page's and the API's."""
    game = request.query_params.get("game")
    if game is not None:
        known_game(game)
    limit = int_param(request, "limit", 50, 1, 500)
    lines = recent_games(web.need_repo(), game=game, limit=limit)
    return game, lines, web.need_tables().names_for(v for g in lines for v in g.seats)


def games(request: Request) -> Response:
    web = web_of(request)
    game, lines, names = recent(web, request)
    return web.render(request, "games.html", {"lines": lines, "names": names, "game": game})


def readable_output(
    web: Web, request: Request, view: GameView, detail: GameDetail
) -> list[tuple[str, VersionName, str]]:
    """The standard error of the bots in this game the signed-in reader may read: their own,
    every seat's for staff (:mod:`referee.storage.readers`)."""
    me = web.session(request)
    if me is None:
        return []
    out = []
    for seat, player in enumerate(view.players):
        owns = player is not None and player.owner_id == me.player_id
        if (
            player is not None
            and seat < len(detail.stderr)
            and readers.may_read_seat(me.role, owns)
        ):
            pack = detail.failure_packs[seat] if seat < len(detail.failure_packs) else None
            text = detail.stderr[seat] or reported_error(pack)
            out.append((view.seat_names[seat], player, text))
    return out


def replay_context(view: GameView, ply: int, more: Extras | None = None) -> dict[str, object]:
    return {
        "view": view,
        "ply": ply,
        "board": view.board_at(ply, pv_of(more, view, ply) if more is not None else ()),
        "clocks": view.clocks_at(ply),
        "to_move": view.seat_names[ply % 2] if ply < view.plies else None,
        "extras": more,
        "chart": more.chart.at(ply) if more is not None else None,
        "think": more.search(view, ply) if more is not None else None,
    }


def game_page(request: Request) -> Response:
    web = web_of(request)
    view, detail = load_game_view(web, request.path_params["game_id"], request)
    ply = int_param(request, "ply", view.plies, 0, view.plies)
    more = extras(web, request, view, detail)
    context = replay_context(view, ply, more)
    context["output"] = readable_output(web, request, view, detail)
    context["story"] = more.story
    context["packs"] = own_packs(web, request, view, detail)
    page = web.render(request, "game.html", context)
    if more.pending:  # its evaluation is on the page in a moment
        briefly(page)
    return validated(request, page, modified=view.summary.finished_at, shared=False)


def game_by_uid(request: Request) -> Response:
    """The stored game of a live game's uid (the live page links here when the game ends);
    404 while it is still being stored."""
    uid = request.path_params["uid"]
    if len(uid) > 64:
        raise HTTPException(404, "no such game")
    try:
        game_id = web_of(request).need_repo().get_game(uid).summary.id
    except NotFoundError:
        raise HTTPException(404, "that game is not stored yet: reload in a moment") from None
    return RedirectResponse(f"/games/{game_id}", status_code=302)


def game_ply(request: Request) -> Response:
    web = web_of(request)
    view, detail = load_game_view(web, request.path_params["game_id"], request)
    ply = request.path_params["ply"]
    if not 0 <= ply <= view.plies:
        raise HTTPException(404, f"the game has {view.plies} moves")
    more = extras(web, request, view, detail)
    page = web.render(request, "_replay.html", replay_context(view, ply, more))
    return briefly(page) if more.pending else page


def game_download(request: Request) -> Response:
    web = web_of(request)
    game_id = request.path_params["game_id"]
    view, detail = load_game_view(web, game_id, request)
    kind = request.path_params["kind"]
    seats = [m.seat for m in view.moves]
    hidden = hidden_seats(web, request, view)
    if kind == "pgn" and detail.record_text:
        body = hidden_text(detail.record_text, seats, hidden)
        media = "application/x-chess-pgn; charset=utf-8"
    elif kind == "json" and detail.record_json:
        record = hidden_json(detail.record_json, seats, hidden)
        body, media = json.dumps(record, indent=2), "application/json"
    else:
        raise HTTPException(404, f"game {game_id} has no {kind} record")
    disposition = f'attachment; filename="game-{game_id}.{kind}"'
    response = Response(body, media_type=media, headers={"content-disposition": disposition})
    shared = shared_record(web, request, view)
    return validated(request, response, modified=view.summary.finished_at, shared=shared)


def shared_record(web: Web, request: Request, view: GameView) -> bool:
    """Whether shared caches may keep this reader's record of the game for long."""
    status = tournament_status(web.need_repo(), view.summary.tournament_id)
    return settled_for_everyone(web.session(request), status)


def hidden_seats(web: Web, request: Request, view: GameView) -> frozenset[int]:
    """The seats whose think records this visitor may not see."""
    status = tournament_status(web.need_repo(), view.summary.tournament_id)
    shown = visible_seats(web.settings.publish_thinking, web.session(request), view.players, status)
    return frozenset(range(len(view.seat_names))) - shown


def version_label(names: dict[int, VersionName], ids: Sequence[int]) -> list[str]:
    return [names[i].display if i in names else str(i) for i in ids]
