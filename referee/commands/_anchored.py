"""``referee leaderboard --anchors``: the table on the calibrated scale of the anchors."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.storage import Repository, TournamentInfo


def print_anchored(repo: Repository, tournament: TournamentInfo | None, game: str) -> int:
    from referee.analysis.anchors import anchored_fit, anchored_versions, load_anchors
    from referee.commands._arena import console, fail
    from referee.commands._safe import SafeTable as Table

    table = load_anchors(game)
    if not table:
        return fail("leaderboard", f"no calibrated anchors for {game}")
    # By identity (launched, the shipped code), never by name: docs/tools.md.
    fixed = {label: table[name] for label, name in anchored_versions(repo).items() if name in table}
    results = repo.game_results(tournament_id=tournament.id if tournament else None, game=game)
    players = {r.first for r in results} | {r.second for r in results}
    fixed = {k: v for k, v in fixed.items() if k in players}
    if not fixed:
        return fail("leaderboard", "no anchor bot has played here: nothing to pin", 1)
    ratings = anchored_fit(results, fixed)
    from referee.ratings.groups import provisional_reason

    games = sum(1 for r in results if not getattr(r, "void", False))
    out = Table(
        title=f"Elo on the anchors' scale ({game})",
        caption=f"rests on {games} games; ? provisional: fewer than 20 counted games",
    )
    for column in ("#", "bot", "Elo", "games", "score", "anchor"):
        out.add_column(column, justify="left" if column == "bot" else "right")
    for rank, (name, elo) in enumerate(sorted(ratings.items(), key=lambda x: -x[1]), 1):
        mine = [r for r in results if name in (r.first, r.second)]
        score = sum(r.score if r.first == name else 1 - r.score for r in mine)
        out.add_row(
            str(rank),
            name,
            f"{elo:.0f}" + ("?" if name not in fixed and provisional_reason(len(mine)) else ""),
            str(len(mine)),
            f"{score / len(mine):.1%}" if mine else "-",
            "pinned" if name in fixed else "",
        )
    console().print(out)
    return 0
