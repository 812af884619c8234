"""``referee tournament show``: a tournament's settings, progress, pairings and standings,
with what its format adds (Swiss points; when an adaptive event stops)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from referee.commands._arena import fail, open_repo, print_order

if TYPE_CHECKING:
    from rich.console import Console

    from referee.storage import Repository, TournamentInfo


def print_table(repo: Repository, t: TournamentInfo) -> None:
    from referee.commands._arena import console, leaderboard_table
    from referee.tournament.standings import standings

    st = standings(repo, t.id)
    console().print(leaderboard_table(st, f"{t.name} ({t.settings.format}, {t.settings.game})"))
    print_order(st, t)


def show(args: argparse.Namespace) -> int:
    from referee.commands._arena import console
    from referee.commands._safe import SafeTable as Table
    from referee.commands._safe import esc
    from referee.storage import NotFoundError

    repo = open_repo(args)
    try:
        t = repo.get_tournament(args.name)
    except NotFoundError as exc:
        return fail("tournament show", exc)
    out = console()
    s = t.settings
    state = repo.tournament_state(t.id)
    tc = s.time_control
    out.print(f"[bold]{esc(t.name)}[/bold] (id {t.id}): {s.format}, {s.game} {dict(s.game_params)}")
    out.print(
        f"  status {t.status}; games finished {state.games_finished}, remaining "
        f"{state.games_remaining}; pairings: {len(state.finished)} finished, "
        f"{len(state.pending)} pending, {len(state.running)} running, {len(state.void)} void"
    )
    out.print(
        f"  clock {tc.get('per_game', 0):g} s/game, {tc.get('per_move', 0):g} s/move, "
        f"+{tc.get('increment', 0):g} s, grace {tc.get('grace', 0):g} s, "
        f"{s.options.get('clock', 'cpu')} clock; memory "
        f"{s.memory_limit_mb or '-'} MB; forfeits: {s.forfeit_policy}; cycles {s.cycles}, "
        f"rounds {s.rounds or '-'}, concurrency {s.concurrency or 'cores'}"
    )
    _print_entries_close(out, repo, t.id)
    labels = {v.id: v.label for v in repo.tournament_entrants(t.id)}
    _print_format_notes(out, repo, t, labels)
    if args.rounds:
        table = Table(title="Pairings")
        for column in ("round", "board", "first", "second", "status", "results"):
            table.add_column(column)
        for p in repo.pairings(t.id):
            games = repo.list_games(pairing_id=p.id, limit=None)
            results = " ".join(
                f"{g.result}{'(void)' if g.voided else ''}" for g in games if g.counted
            )
            table.add_row(
                str(p.round),
                str(p.board + 1),
                labels.get(p.bot_a_id, "?"),
                "bye" if p.bot_b_id is None else labels.get(p.bot_b_id, "?"),
                str(p.status),
                results,
            )
        out.print(table)
    print_table(repo, t)
    return 0


def _print_format_notes(
    out: Console, repo: Repository, t: TournamentInfo, labels: dict[int, str]
) -> None:
    """Swiss: each entrant's points; adaptive: when it stops."""
    from referee.commands._safe import esc

    if t.settings.format == "swiss":
        from referee.tournament.schedule import swiss_scores

        points = swiss_scores(repo, t)
        order = sorted(labels, key=lambda i: -points.get(str(i), 0.0))
        out.print(
            "  Swiss points (a game pair is worth 2, a bye a won pair): "
            + ", ".join(f"{esc(labels[i])} {points.get(str(i), 0.0):g}" for i in order)
        )
    if t.settings.format == "adaptive":
        from referee.tournament.schedule import adaptive_terms, total_games_planned

        confidence, most = adaptive_terms(t, len(labels))
        out.print(
            f"  adaptive: stops when every two neighbours' order is {100 * confidence:g}% sure, "
            f"or after {most} rounds ({total_games_planned(t, len(labels))} games)"
        )


def _print_entries_close(out: Console, repo: Repository, tournament_id: int) -> None:
    from referee.storage import submissions as rows

    close = rows.entries_close(repo.db, tournament_id)
    if close is not None:
        out.print(f"  entries close {close.isoformat()} (submitted bots: latest accepted by then)")
