"""Leaderboards from storage: the rating code's table over a tournament's (or all) games."""

from __future__ import annotations

from dataclasses import dataclass

from referee.ratings import Leaderboard, build_leaderboard
from referee.storage import BotVersionInfo, RatingInput, Repository
from referee.tournament.ladder import DEFAULT_GAME


@dataclass(frozen=True, slots=True, eq=False)
class Standings:
    board: Leaderboard
    #: label (``name@version``) -> version
    versions: dict[str, BotVersionInfo]
    tournament_id: int | None


def standings(
    repo: Repository,
    tournament_id: int | None = None,
    *,
    anchor: str | None = None,
    anchor_rating: float = 1500.0,
    game: str | None = None,
) -> Standings:
    """The table of a tournament (its entrants, even without games) or of every stored game of
    ``game`` (default Tetress: two games' ratings are never one table)."""
    if tournament_id is None:
        game = game or DEFAULT_GAME
    results = repo.game_results(tournament_id=tournament_id, game=game)
    if tournament_id is not None:
        entrants = repo.tournament_entrants(tournament_id)
    else:
        entrants = repo.list_bot_versions()
    versions = {v.label: v for v in repo.list_bot_versions()}
    players = [e.label for e in entrants]
    if tournament_id is None:
        seen = {p for r in results for p in (r.first, r.second)}
        players = [p for p in players if p in seen]
    if anchor is not None and anchor not in versions and "@" not in anchor:
        # A bare bot name anchors its version in this table.
        named = [p for p in players if p.split("@", 1)[0] == anchor]
        if len(named) == 1:
            anchor = named[0]
    board = build_leaderboard(results, players=players, anchor=anchor, anchor_rating=anchor_rating)
    return Standings(board, versions, tournament_id)


def save_tournament_ratings(repo: Repository, tournament_id: int) -> None:
    """Store the maximum-likelihood and incremental Elo tables of a tournament."""
    st = standings(repo, tournament_id)
    ml = [
        RatingInput(
            bot_version_id=st.versions[r.player].id,
            rating=r.elo,
            ci_low=r.elo - r.ci95 if r.ci95 is not None else None,
            ci_high=r.elo + r.ci95 if r.ci95 is not None else None,
            games=r.games,
        )
        for r in st.board.rows
        if r.elo is not None
    ]
    games = st.board.fit.games
    if ml:
        repo.save_ratings(
            "ml_elo", ml, tournament_id=tournament_id, anchor=st.board.anchor, games_counted=games
        )
    incremental = sorted(st.board.rows, key=lambda r: -r.elo_incremental)
    k = [
        RatingInput(
            bot_version_id=st.versions[r.player].id, rating=r.elo_incremental, games=r.games
        )
        for r in incremental
    ]
    if k:
        repo.save_ratings(
            "k_elo", k, tournament_id=tournament_id, anchor="start 1500, K=32", games_counted=games
        )
