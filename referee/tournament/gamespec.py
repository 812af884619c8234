"""What one tournament game is played with, read from the stored tournament alone.

The in-process runner (:mod:`.runner`) and a queue worker on another machine
(:mod:`referee.workers`) build a game from the same stored facts, so a game played on a worker
is the game the runner would have played: the same terms (game, clocks, memory, isolation), the
same seats (index 0 gives ``bot_a`` the first seat), the same record labels and opening.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.game import Game
from engine.records.openings import Book, book_from_json, opening_labels
from engine.registry import load_game
from referee.match.clock import ClockMode, TimeControl
from referee.play.game import GameTerms
from referee.play.store import Filing
from referee.sandbox.isolation import Isolation, require_trusted
from referee.storage import BotVersionInfo, PairingInfo, SourceKind, TournamentInfo


def tournament_game(info: TournamentInfo) -> Game[Any]:
    s = info.settings
    return load_game(s.game, **{k: int(v) for k, v in s.game_params.items()})


def game_terms(
    info: TournamentInfo,
    game: Game[Any],
    *,
    isolation: Isolation,
    connect_timeout: float = 30.0,
    remote_timeout: float | None = None,
) -> GameTerms:
    """The terms every game of ``info`` is played on (the tournament's options win)."""
    s = info.settings
    tc = s.time_control
    return GameTerms(
        game=game,
        time_control=TimeControl(
            game_time_s=float(tc.get("per_game", 180.0)),
            move_time_s=float(tc.get("per_move", 0.0)),
            increment_s=float(tc.get("increment", 0.0)),
            grace_s=float(tc.get("grace", 0.25)),
            # Counted in CPU seconds only where every seat is launched (docs/limits.md).
            clock=ClockMode(str(s.options.get("clock", ClockMode.CPU))),
        ),
        memory_mb=s.memory_limit_mb,
        connect_timeout=float(s.options.get("connect_timeout", connect_timeout)),
        remote_timeout=remote_timeout,
        isolation=isolation,
    )


def tournament_book(info: TournamentInfo) -> Book | None:
    """The tournament's openings book (stored with it when created with --openings)."""
    book = info.settings.options.get("openings")
    return book_from_json(book, str(book.get("source") or "book")) if book else None


def check_isolation(
    isolation: Isolation, entrants: Iterable[BotVersionInfo], *, allow_none: bool
) -> None:
    """Refuse, before any game, to launch another owner's bot without the sandbox."""
    for v in entrants:
        if v.source_kind is not SourceKind.REMOTE:
            require_trusted(
                isolation,
                trusted=v.owner_id is None,
                what=f"{v.label} (entered by player #{v.owner_id})",
                allow_none=allow_none,
            )


def slot_filing(info: TournamentInfo, pairing: PairingInfo, index: int) -> Filing:
    """Where game ``index`` of ``pairing`` is stored: the tournament's slot."""
    return Filing(info.name, tournament_id=info.id, pairing_id=pairing.id, game_index=index)


def slot_seats(
    versions: Mapping[int, BotVersionInfo], pairing: PairingInfo, index: int
) -> tuple[BotVersionInfo, BotVersionInfo]:
    """Who sits where in game ``index`` of ``pairing``: sides swap from one game to the next."""
    assert pairing.bot_b_id is not None
    a, b = versions[pairing.bot_a_id], versions[pairing.bot_b_id]
    return (a, b) if index % 2 == 0 else (b, a)


def slot_labels(
    info: TournamentInfo, book: Book | None, pairing: PairingInfo, index: int
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The record's labels of game ``index`` of ``pairing`` and its opening (book moves)."""
    # Tag names in the record (capitalised); Round and Game are standard tags already.
    labels = {
        "tournament": info.name,
        "tournamentRound": str(pairing.round),
        "board": str(pairing.board + 1),
        "leg": str(index + 1),
    }
    opening: tuple[str, ...] = ()
    if book is not None:
        # Both games of a pair (legs 1-2, 3-4...) start from one opening, sides swapped.
        pairs = max(1, (info.settings.games_per_pairing + 1) // 2)
        chosen = book.pick(pairing.id * pairs + index // 2)
        labels.update(opening_labels(chosen, book))
        opening = tuple(chosen.moves)
    return labels, opening
