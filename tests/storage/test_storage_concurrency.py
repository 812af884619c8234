"""Concurrent writers: two connections recording games at once lose nothing, corrupt nothing,
and a contested game slot is won by exactly one of them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import text

from referee.storage import (
    Database,
    DuplicateGameError,
    FinishedGame,
    Repository,
    TournamentFormat,
    TournamentSettings,
    open_database,
)

MakeGame = Callable[..., FinishedGame]
PER_WRITER = 25
CONTESTED = 10


def test_two_writers_lose_nothing(
    database_url: str, db: Database, versions: list[int], make_game: MakeGame
) -> None:
    """Two writers, each on its own engine and connection, record their own games and race
    for the same contested slots while a reader keeps reading: every own game is stored,
    every contested slot holds exactly one game, and the loser of each race was told."""
    repo = Repository(db)
    t = repo.create_tournament(
        TournamentSettings(name="race", format=TournamentFormat.ROUND_ROBIN, game="tetress"),
        versions[:2],
    )
    a, b = versions[:2]
    own = [
        repo.add_pairings(t.id, writer + 1, [(a, b)] * PER_WRITER, games_per_pairing=1)
        for writer in range(2)
    ]
    contested = repo.add_pairings(t.id, 9, [(a, b)] * CONTESTED, games_per_pairing=1)

    start = threading.Barrier(3)
    outcomes: list[list[str]] = [[], []]
    errors: list[BaseException] = []
    stop_reading = threading.Event()
    reads = [0]

    def write(writer: int) -> None:
        try:
            with open_database(database_url) as mine:
                writer_repo = Repository(mine)
                start.wait()
                for mine_pairing, race_pairing in zip(own[writer], contested * 3, strict=False):
                    writer_repo.record_game(make_game([a, b], pairing_id=mine_pairing.id))
                    try:
                        writer_repo.record_game(make_game([a, b], pairing_id=race_pairing.id))
                        outcomes[writer].append("won")
                    except DuplicateGameError:
                        outcomes[writer].append("lost")
        except BaseException as exc:
            errors.append(exc)

    def read() -> None:
        try:
            with open_database(database_url) as mine:
                reader = Repository(mine)
                start.wait()
                while not stop_reading.is_set():
                    reader.tournament_state(t.id)
                    reads[0] += 1
        except BaseException as exc:
            errors.append(exc)

    writers = [threading.Thread(target=write, args=(w,)) for w in range(2)]
    reader = threading.Thread(target=read)
    for thread in (*writers, reader):
        thread.start()
    for thread in writers:
        thread.join(timeout=120)
    stop_reading.set()
    reader.join(timeout=120)

    assert errors == []
    assert reads[0] > 0
    # Each contested pairing was tried by both writers (3 times round): won exactly once.
    assert outcomes[0].count("won") + outcomes[1].count("won") == CONTESTED
    state = repo.tournament_state(t.id)
    assert state.games_remaining == 0
    assert len(state.finished) == 2 * PER_WRITER + CONTESTED
    assert repo.count_games(tournament_id=t.id) == 2 * PER_WRITER + CONTESTED
    if db.dialect == "sqlite":
        with db.engine.connect() as conn:
            assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
            assert conn.execute(text("PRAGMA foreign_key_check")).all() == []


@pytest.mark.slow
def test_sqlite_writers_in_two_processes(tmp_path: Path) -> None:
    """The same file opened by a second process while the first holds it open: both see each
    other's committed writes (WAL shares them through the -wal and -shm files)."""
    import subprocess
    import sys

    path = tmp_path / "shared.db"
    with open_database(path) as db:
        repo = Repository(db)
        repo.create_player("first")
        code = (
            "import sys\n"
            "from referee.storage import Repository, open_database\n"
            "repo = Repository(open_database(sys.argv[1]))\n"
            "assert repo.get_player('first').name == 'first'\n"
            "repo.create_player('second')\n"
        )
        root = Path(__file__).resolve().parents[2]
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)], cwd=root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert [p.name for p in repo.list_players()] == ["first", "second"]


def test_one_repository_shared_by_threads(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """One repository used from several threads at once (as a server's worker threads do)
    stores every game."""
    t = repo.create_tournament(
        TournamentSettings(name="shared", format=TournamentFormat.ROUND_ROBIN, game="tetress"),
        versions[:2],
    )
    a, b = versions[:2]
    pairings = repo.add_pairings(t.id, 1, [(a, b)] * 40, games_per_pairing=2)
    errors: list[BaseException] = []

    def play(share: list[int]) -> None:
        try:
            for pairing_id in share:
                assert repo.claim_pairing(pairing_id)
                repo.record_game(make_game([a, b], pairing_id=pairing_id, game_index=0))
                repo.record_game(make_game([b, a], pairing_id=pairing_id, game_index=1))
        except BaseException as exc:
            errors.append(exc)

    ids = [p.id for p in pairings]
    threads = [threading.Thread(target=play, args=(ids[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert repo.count_games(tournament_id=t.id) == 80
    assert repo.tournament_state(t.id).games_remaining == 0
