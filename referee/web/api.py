"""JSON endpoints beside the pages, with the same data (documented in docs/web.md)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from referee.storage import TournamentInfo
from referee.storage.browse import GameLine, VersionName
from referee.web.botstory import Matchup, TimeProfile
from referee.web.context import web_of
from referee.web.gamepage import load_game_view
from referee.web.live import running, start_payload
from referee.web.moverows import move_rows
from referee.web.pages import (
    bot_data,
    hidden_seats,
    known_game,
    recent,
    shared_record,
    snapshot,
    sorted_rows,
    tournament_data,
    versus_data,
)
from referee.web.validators import validated


def _time(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def _name(names: Mapping[int, VersionName], version_id: int) -> dict[str, object]:
    v: VersionName | None = names.get(version_id)
    if v is None:
        return {"bot_version_id": version_id}
    return {
        "bot_version_id": v.id,
        "bot_id": v.bot_id,
        "owner": v.owner,
        "bot": v.bot,
        "version": v.version,
    }


def _line(line: GameLine, names: Mapping[int, VersionName]) -> dict[str, object]:
    return {
        "id": line.id,
        "uid": line.uid,
        "game": line.game,
        "tournament_id": line.tournament_id,
        "result": line.result,
        "verdict": line.verdict,
        "reason": line.reason,
        "plies": line.plies,
        "voided": line.voided,
        "finished_at": _time(line.finished_at),
        "seats": [_name(names, v) for v in line.seats],
    }


def leaderboard(request: Request) -> Response:
    game = known_game(request.path_params["game"])
    snap = snapshot(web_of(request))
    table = snap.tables.get(game)
    rows, sort, direction = sorted_rows(request, table)
    return JSONResponse(
        {
            "game": game,
            "anchor": table.anchor if table else None,
            "games": table.games if table else 0,
            "sort": sort,
            "dir": direction,
            "rows": [r.as_dict() for r in rows],
            "ladder": [r.as_dict() for r in table.ladder] if table else [],
        }
    )


def tournaments(request: Request) -> Response:
    repo = web_of(request).need_repo()
    return JSONResponse([_tournament_head(t) for t in repo.list_tournaments()])


def _tournament_head(t: TournamentInfo) -> dict[str, object]:
    """What the tournament list and one tournament's page both start with."""
    return {
        "id": t.id,
        "name": t.name,
        "format": str(t.settings.format),
        "game": t.settings.game,
        "status": str(t.status),
    }


def tournament(request: Request) -> Response:
    data = tournament_data(web_of(request), request.path_params["tid"])
    t, board, progress = data["t"], data["board"], data["progress"]
    names = data["names"]

    def who(label: str) -> dict[str, object]:
        v = names.get(label)
        return _name({v.id: v}, v.id) if v is not None else {"label": label}

    return JSONResponse(
        {
            **_tournament_head(t),
            "progress": {
                "finished": progress.finished,
                "remaining": progress.remaining,
                "planned": progress.planned,
                "running": progress.running,
            },
            "anchor": board.anchor,
            "rows": [{**r.as_dict(), **who(r.player)} for r in board.rows],
            "cross_table": {
                a: {b: h.as_dict() for b, h in opp.items()} for a, opp in board.cross.items()
            },
            "los": {a: dict(opp) for a, opp in board.los.items()},
            "order": [
                {"upper": upper, "lower": lower, "p_upper_stronger": p}
                for upper, lower, p in data["order"]
            ],
            "confidence": data["confidence"],
        }
    )


def bot(request: Request) -> Response:
    data = bot_data(web_of(request), request.path_params["bot_id"])
    names = data["names"]
    first: VersionName = data["bot"]
    return JSONResponse(
        {
            "bot_id": first.bot_id,
            "bot": first.bot,
            "owner": first.owner,
            "versions": [
                {
                    "bot_version_id": v.id,
                    "version": v.version,
                    "created_at": _time(info.created_at) if info else None,
                    "source_kind": str(info.source_kind) if info else None,
                }
                for v, info in data["versions"]
            ],
            "games": {
                item["game"]: {
                    "rows": [r.as_dict() for r in item["rows"]],
                    "opponents": [
                        {
                            **_name(names, o.opponent.id),
                            "wins": o.wins,
                            "draws": o.draws,
                            "losses": o.losses,
                        }
                        for o in item["opponents"]
                    ],
                    "matchups": [_matchup(m) for m in item["matchups"]],
                    "time_profiles": [_profile(p) for p in item["profiles"]],
                }
                for item in data["per_game"]
            },
            "recent": [_line(g, names) for g in data["recent"]],
            "same_author": [
                {"bot_id": o.bot_id, "bot": o.bot, "kind": kind} for o, kind in data["same_author"]
            ],
        }
    )


def _matchup(m: Matchup) -> dict[str, object]:
    return {
        "opponent_bot_id": m.opponent.bot_id,
        "opponent": m.opponent.display,
        "games": m.games,
        "wins": m.wins,
        "draws": m.draws,
        "losses": m.losses,
        "score_pct": round(m.score_pct, 2),
        "crash_pct": round(m.crash_pct, 2),
        "time_loss_pct": round(m.time_loss_pct, 2),
        "average_plies": round(m.average_plies, 1),
    }


def _profile(p: TimeProfile) -> dict[str, object]:
    return {
        "bot_version_id": p.version.id,
        "version": p.version.version,
        "games": p.games,
        "moves": p.moves,
        "median_move_s": p.median_s,
        "p95_move_s": p.p95_s,
        "peak_memory_mb": None if p.peak_mb is None else round(p.peak_mb, 1),
        "regression": p.regression or None,
    }


def versus(request: Request) -> Response:
    data = versus_data(
        web_of(request), request.path_params["bot_id"], request.path_params["other_id"]
    )
    h = data["h2h"]
    seats = dict(data["seat_names"])
    return JSONResponse(
        {
            "bot": data["a"].display,
            "opponent": data["b"].display,
            "games": len(h.games),
            "points": h.points,
            "by_seat": {seats[s]: {"points": p, "games": n} for s, (p, n) in h.by_seat.items()},
            "cross": [
                {"version": a, "opponent_version": b, "wins": w, "draws": d, "losses": l_}
                for (a, b), (w, d, l_) in h.cross.items()
            ],
            "game_ids": [g.id for g in h.games],
        }
    )


def games(request: Request) -> Response:
    _, lines, names = recent(web_of(request), request)
    return JSONResponse([_line(g, names) for g in lines])


def game(request: Request) -> Response:
    web = web_of(request)
    view, detail = load_game_view(web, request.path_params["game_id"], request)
    s = view.summary
    analysis = web.analyst.get(s.id, None, (detail.record_json or {}).get("analysis"))
    hidden = hidden_seats(web, request, view)
    rows = move_rows(view, analysis, hidden)
    names = {p.id: p for p in view.players if p is not None}
    response = JSONResponse(
        {
            "id": s.id,
            "uid": s.uid,
            "game": s.game,
            "params": dict(s.game_params),
            "tournament_id": s.tournament_id,
            "result": s.result,
            "verdict": str(s.verdict),
            "termination": None if s.termination is None else str(s.termination),
            "reason": s.reason,
            "sentence": view.sentence,
            "winner_seat": s.winner_seat,
            "started_at": _time(s.started_at),
            "finished_at": _time(s.finished_at),
            "seat_names": list(view.seat_names),
            "players": [_name(names, x.bot_version_id) for x in s.seats],
            "time_budget_s": view.budget_s,
            "moves": [m.as_dict() for m in view.moves],
            "rows": rows,
            "positions": list(view.positions),
        }
    )
    # The analysis is filled in later: only what cannot change is cached by shared caches.
    shared = analysis is not None and shared_record(web, request, view)
    return validated(request, response, modified=s.finished_at, shared=shared)


async def live(request: Request) -> Response:
    return JSONResponse(
        [
            {
                "uid": g.uid,
                "game": g.game,
                "players": list(g.players),
                "seat_names": list(g.seat_names),
                "plies": len(g.moves),
                "tournament_id": g.tournament_id,
            }
            for g in running(request)
        ]
    )


async def live_game(request: Request) -> Response:
    from referee.web.live import _find

    found = _find(request)
    data = start_payload(found, list(found.moves))
    data.pop("board")
    return JSONResponse(data)


def me(request: Request) -> Response:
    from referee.web.account import my_bots, require_session

    web = web_of(request)
    session = require_session(request)
    data = my_bots(web, session)
    names = data["names"]
    return JSONResponse(
        {
            "player": session.player,
            "versions": [_name(names, v.id) for v in data["versions"]],
            "recent": [_line(g, names) for g in data["recent"]],
        }
    )
