"""The opening explorer: the first moves of the class's rated games as a tree, each line with
its games, the score of the side that chose it and the bots that play it, filterable by bot and
by period, each line linking to its games.

Lines the rules make the same game are one line of the tree: each game's first moves are read
as the game's representative of their class (:meth:`engine.game.Game.canonical_line`; for
Tetress, up to the torus's translations and the square's rotations and reflections), so the
tree shows them in one frame and a linked game may show its line shifted or turned.

Read from the stored move lists of the newest :data:`MAX_GAMES` rated games of one game kind
(Tetress by default), the first :data:`DEPTH` plies; pure once the rows are read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import select

from engine.registry import load_game
from referee.server import bounds
from referee.storage import Repository
from referee.storage.browse import VersionName
from referee.storage.enums import GameKind
from referee.storage.models import GameRow, GameSeat

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse

MAX_GAMES = 5000
DEPTH = 4
#: Games linked from one line (the newest).
LINKED = 12


@dataclass(frozen=True, slots=True)
class OpeningGame:
    id: int
    finished_at: datetime
    winner_seat: int | None
    seats: tuple[int, int]
    moves: tuple[str, ...]


@dataclass(slots=True)
class Line:
    """One move after a line of moves: how often it was played and how it went."""

    move: str
    ply: int
    games: int = 0
    #: Points of the side that played this move (1 a win, 0.5 a draw).
    points: float = 0.0
    #: Bot version ids that played this move, with how often.
    bots: dict[int, int] = field(default_factory=dict)
    game_ids: list[int] = field(default_factory=list)
    children: dict[str, Line] = field(default_factory=dict)

    @property
    def score_pct(self) -> float:
        return 100.0 * self.points / self.games if self.games else 0.0

    def ordered(self) -> list[Line]:
        return sorted(self.children.values(), key=lambda c: (-c.games, c.move))

    def top_bots(self, names: Mapping[int, VersionName], n: int = 4) -> list[VersionName]:
        shown: dict[int, VersionName] = {}
        for vid, _ in sorted(self.bots.items(), key=lambda kv: -kv[1]):
            name = names.get(vid)
            if name is not None and name.bot_id not in shown:
                shown[name.bot_id] = name
        return list(shown.values())[:n]


def opening_games(
    repo: Repository,
    game: str,
    *,
    bot_versions: Sequence[int] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = MAX_GAMES,
) -> list[OpeningGame]:
    """Rated, finished games of ``game`` (of these bot versions when given), newest first."""
    query = select(GameRow.id, GameRow.finished_at, GameRow.winner_seat, GameRow.moves).where(
        GameRow.kind == GameKind.RATED.value, GameRow.game == game, GameRow.verdict != "aborted"
    )
    if bot_versions:
        seated = select(GameSeat.game_id).where(GameSeat.bot_version_id.in_(list(bot_versions)))
        query = query.where(GameRow.id.in_(seated))
    if since is not None:
        query = query.where(GameRow.finished_at >= since)
    if until is not None:
        query = query.where(GameRow.finished_at < until)
    query = query.order_by(GameRow.finished_at.desc(), GameRow.id.desc()).limit(limit)
    with repo.db.read() as s:
        rows = list(s.execute(query))
        seats: dict[int, dict[int, int]] = {}
        if rows:
            for gid, seat, vid in s.execute(
                select(GameSeat.game_id, GameSeat.seat, GameSeat.bot_version_id).where(
                    GameSeat.game_id.in_([r[0] for r in rows])
                )
            ):
                seats.setdefault(gid, {})[seat] = vid
    out = []
    for gid, finished, winner, moves in rows:
        pair = seats.get(gid, {})
        if set(pair) != {0, 1}:
            continue
        texts = tuple(str(m.get("move", "")) for m in (moves or ())[:DEPTH] if isinstance(m, dict))
        out.append(OpeningGame(gid, finished, winner, (pair[0], pair[1]), folded(game, texts)))
    return out


@lru_cache(maxsize=16384)
def folded(game: str, texts: tuple[str, ...]) -> tuple[str, ...]:
    """The representative of the opening ``texts`` (see the module's docstring); a line the
    engine cannot read stays as it was stored."""
    rules = load_game(game)
    try:
        line = rules.canonical_line([rules.move_from_text(text) for text in texts])
    except Exception:
        return texts
    return tuple(rules.move_to_text(move) for move in line)


def tree(games: Sequence[OpeningGame], depth: int = DEPTH) -> Line:
    """The explorer's tree: the root's children are the first moves."""
    root = Line("", 0)
    for g in games:
        node = root
        for ply, move in enumerate(g.moves[:depth], start=1):
            seat = (ply - 1) % 2
            child = node.children.get(move)
            if child is None:
                child = node.children[move] = Line(move, ply)
            child.games += 1
            child.points += 0.5 if g.winner_seat is None else float(g.winner_seat == seat)
            vid = g.seats[seat]
            child.bots[vid] = child.bots.get(vid, 0) + 1
            if len(child.game_ids) < LINKED:
                child.game_ids.append(g.id)
            node = child
        root.games += 1
    return root


def as_json(node: Line, names: Mapping[int, VersionName]) -> list[dict[str, object]]:
    """The tree below ``node`` for the JSON API."""
    return [
        {
            "move": c.move,
            "ply": c.ply,
            "games": c.games,
            "score_pct": round(c.score_pct, 1),
            "bots": [b.display for b in c.top_bots(names)],
            "game_ids": c.game_ids,
            "next": as_json(c, names),
        }
        for c in node.ordered()
    ]


# ----------------------------------------------------------------------------- the pages


class Filters(TypedDict):
    """The explorer's filters: the game, a bot's id, and a date range."""

    game: str
    bot: int | None
    since: datetime | None
    until: datetime | None


def _filters(request: Request) -> Filters:
    """``game``, ``bot`` (a bot id), ``since``/``until`` (dates) from the request; a bad value
    is a 400 naming it."""
    from starlette.exceptions import HTTPException

    from referee.web.pages import known_game

    game = known_game(request.path_params["game"])
    out: Filters = {"game": game, "bot": None, "since": None, "until": None}
    bot = request.query_params.get("bot", "")
    if bot:
        out["bot"] = bounds.database_id(bot)
        if out["bot"] is None:
            raise HTTPException(400, "bot is a bot's number")
    for key in ("since", "until"):
        text = request.query_params.get(key, "")
        if text:
            try:
                out[key] = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
            except ValueError:
                raise HTTPException(400, f"{key} is a date, YYYY-MM-DD") from None
    return out


def _explore(request: Request) -> tuple[Filters, Line, Mapping[int, VersionName]]:
    from referee.web.context import web_of
    from referee.web.pages import snapshot

    web = web_of(request)
    f = _filters(request)
    names = snapshot(web).names
    versions = [v.id for v in names.values() if v.bot_id == f["bot"]] if f["bot"] else []
    if f["bot"] is not None and not versions:
        versions = [-1]  # no such bot: no games
    games = opening_games(
        web.need_repo(), f["game"], bot_versions=versions, since=f["since"], until=f["until"]
    )
    return f, tree(games), names


def explorer_page(request: Request) -> HTMLResponse:
    from referee.web.context import web_of

    f, root, names = _explore(request)
    bots = sorted({(v.bot_id, v.display) for v in names.values()}, key=lambda b: b[1].lower())
    context = {"f": f, "root": root, "names": names, "bots": bots}
    context["symmetries"] = load_game(f["game"]).symmetries
    return web_of(request).render(request, "explorer.html", context)


def explorer_api(request: Request) -> JSONResponse:
    from starlette.responses import JSONResponse

    f, root, names = _explore(request)
    return JSONResponse({"game": f["game"], "games": root.games, "moves": as_json(root, names)})
