"""Every game of a tournament as one PGN-like file (what cutechess's ``-pgnout`` gives)."""

from __future__ import annotations

from typing import Any

#: Games fetched per page from storage.
PAGE = 500


def tournament_pgn(repo: Any, key: int | str) -> tuple[str, int]:
    """The records of every stored game of the tournament, oldest first, blank-line separated
    (the form ``engine.records.read_records`` reads back); and how many there are. ``key``:
    the tournament's name or id."""
    tournament = repo.get_tournament(key)
    texts: list[str] = []
    offset = 0
    while True:
        page = repo.list_games(tournament_id=tournament.id, limit=PAGE, offset=offset)
        for summary in page:
            record = repo.get_game(summary.id).record_text
            if record:
                texts.append(record.rstrip("\n") + "\n")
        if len(page) < PAGE:
            break
        offset += PAGE
    return "\n".join(texts), len(texts)
