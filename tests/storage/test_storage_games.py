"""Game writes: complete round trips, all-or-nothing transactions, no double counting."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from engine.adjudication.verdicts import Verdict
from referee.storage import (
    ConflictError,
    Database,
    DuplicateGameError,
    FinishedGame,
    ForfeitPolicy,
    MemoryMeasure,
    PairingStateError,
    PairingStatus,
    Repository,
    SeatResult,
    TournamentFormat,
    TournamentSettings,
)
from referee.storage.models import GameRow, GameSeat, Pairing

MakeGame = Callable[..., FinishedGame]


def _tournament(
    repo: Repository, versions: list[int], policy: ForfeitPolicy = ForfeitPolicy.LOSS
) -> tuple[int, int]:
    """A round robin of the first two versions with one pairing; (tournament id, pairing id)."""
    t = repo.create_tournament(
        TournamentSettings(
            name=f"rr-{policy}",
            format=TournamentFormat.ROUND_ROBIN,
            game="tetress",
            forfeit_policy=policy,
        ),
        versions[:2],
    )
    [p] = repo.add_pairings(t.id, 1, [(versions[0], versions[1])])
    return t.id, p.id


def _table_counts(db: Database) -> tuple[int, int]:
    with db.read() as s:
        games = s.scalar(select(func.count()).select_from(GameRow)) or 0
        seats = s.scalar(select(func.count()).select_from(GameSeat)) or 0
        return games, seats


def test_finished_game_round_trips(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Everything a finished game carries comes back: seats, timings, memory and how it was
    measured, per-move rows, record text and JSON, verdict, reason, result."""
    t_id, p_id = _tournament(repo, versions)
    game = make_game(versions[:2], pairing_id=p_id, game_index=0, winner=0)
    stored = repo.record_game(game)
    detail = repo.get_game(stored.uid)
    summary = detail.summary
    assert summary == stored
    assert (summary.tournament_id, summary.pairing_id, summary.game_index) == (t_id, p_id, 0)
    assert (summary.verdict, summary.result, summary.winner_seat) == (Verdict.NORMAL, "1-0", 0)
    assert summary.termination == "no_legal_move"
    assert summary.reason == game.reason
    assert summary.plies == 6 and summary.counted and not summary.voided
    assert summary.started_at == game.started_at and summary.finished_at == game.finished_at
    assert [s.bot_version_id for s in summary.seats] == versions[:2]
    assert [s.score for s in summary.seats] == [1.0, 0.0]
    assert summary.seats[1].time_used_s == pytest.approx(1.05)
    assert summary.seats[1].reported_think_s == pytest.approx(1.04)
    assert summary.seats[1].peak_memory_bytes == 41_000_001
    assert summary.seats[1].memory_measure is MemoryMeasure.RSS_POLL
    assert list(detail.moves) == [dict(m) for m in game.moves]
    assert detail.record_text == game.record_text
    assert detail.record_json == game.record_json
    assert detail.stderr == ("stderr of seat 0\n", "stderr of seat 1\n")
    assert repo.get_game(stored.id) == detail


def test_pairing_finishes_with_its_last_game(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """The pairing is running after its first game and finished after its second, each
    status change written with the game that caused it."""
    _, p_id = _tournament(repo, versions)
    assert repo.claim_pairing(p_id)
    repo.record_game(make_game(versions[:2], pairing_id=p_id, game_index=0))
    assert repo.get_pairing(p_id).status is PairingStatus.RUNNING
    assert repo.get_pairing(p_id).remaining_games == (1,)
    repo.record_game(make_game(versions[1::-1], pairing_id=p_id, game_index=1, winner=None))
    pairing = repo.get_pairing(p_id)
    assert pairing.status is PairingStatus.FINISHED
    assert pairing.finished_games == (0, 1) and pairing.remaining_games == ()


def test_failure_in_seat_rows_leaves_nothing(
    db: Database, repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """A seat naming a missing bot version is refused by the database (a foreign key) after
    the game row was sent: the whole write is rolled back."""
    game = make_game(versions[:2])
    # A one-off game: in a pairing the seats are checked against the pairing before any
    # write, and this test needs the database itself to refuse mid-write.
    broken = replace(game, seats=[game.seats[0], replace(game.seats[1], bot_version_id=10_000)])
    with pytest.raises(ConflictError):
        repo.record_game(broken)
    assert _table_counts(db) == (0, 0)
    repo.record_game(game)
    assert _table_counts(db) == (1, 2)


@contextmanager
def _fail_when_flushing(db: Database, model: type[Any]) -> Iterator[None]:
    """Make the next flush that writes a ``model`` row raise, after earlier rows were sent."""

    def explode(session: Session, _context: Any, _instances: Any) -> None:
        if any(isinstance(obj, model) for obj in session.dirty):
            raise RuntimeError(f"simulated crash while writing {model.__name__}")

    event.listen(Session, "before_flush", explode)
    try:
        yield
    finally:
        event.remove(Session, "before_flush", explode)


def test_failure_at_the_pairing_update_leaves_nothing(
    db: Database, repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """A crash at the last step (the pairing's status, after the game and seat rows were
    flushed) rolls back the game and its seats too: nothing is half-written."""
    _, p_id = _tournament(repo, versions)
    assert repo.claim_pairing(p_id)
    with _fail_when_flushing(db, Pairing), pytest.raises(RuntimeError, match="simulated"):
        repo.record_game(make_game(versions[:2], pairing_id=p_id))
    assert _table_counts(db) == (0, 0)
    pairing = repo.get_pairing(p_id)
    assert pairing.status is PairingStatus.RUNNING and pairing.finished_games == ()
    # The same game can then be written for real.
    repo.record_game(make_game(versions[:2], pairing_id=p_id))
    assert _table_counts(db) == (1, 2)


def test_a_game_slot_is_counted_once(
    db: Database, repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Recording game 0 of a pairing twice is refused and leaves exactly one game."""
    _, p_id = _tournament(repo, versions)
    repo.record_game(make_game(versions[:2], pairing_id=p_id, game_index=0))
    with pytest.raises(DuplicateGameError) as caught:
        repo.record_game(make_game(versions[:2], pairing_id=p_id, game_index=0, winner=1))
    assert (caught.value.pairing_id, caught.value.game_index) == (p_id, 0)
    assert _table_counts(db) == (1, 2)
    assert [g.winner_seat for g in repo.list_games(pairing_id=p_id)] == [0]


def test_unique_constraint_itself_refuses_a_second_game(
    db: Database, repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Bypassing the repository, the database still refuses a second row for one
    (pairing, game index) slot."""
    from sqlalchemy.exc import IntegrityError

    _, p_id = _tournament(repo, versions)
    first = repo.record_game(make_game(versions[:2], pairing_id=p_id, game_index=0))
    with pytest.raises(IntegrityError), db.write() as s:
        original = s.get(GameRow, first.id)
        assert original is not None
        s.add(
            GameRow(
                uid="copy",
                tournament_id=original.tournament_id,
                pairing_id=p_id,
                game_index=0,
                slot=0,
                game="tetress",
                verdict="normal",
                result="1-0",
                plies=1,
                started_at=original.started_at,
                finished_at=original.finished_at,
            )
        )
    assert _table_counts(db) == (1, 2)


def test_aborted_game_is_kept_but_replayed(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """An aborted game keeps its record but not the slot: the game is played again and only
    the replay counts."""
    _, p_id = _tournament(repo, versions)
    assert repo.claim_pairing(p_id)
    aborted = repo.record_game(
        make_game(versions[:2], pairing_id=p_id, verdict=Verdict.ABORTED, winner=None)
    )
    assert (aborted.result, aborted.counted, aborted.voided) == ("*", False, True)
    assert repo.get_pairing(p_id).remaining_games == (0, 1)
    replay = repo.record_game(make_game(versions[:2], pairing_id=p_id, game_index=0))
    assert replay.counted
    assert repo.get_pairing(p_id).finished_games == (0,)
    assert len(repo.list_games(pairing_id=p_id)) == 2
    assert len(repo.list_games(pairing_id=p_id, include_aborted=False)) == 1
    assert [r.verdict for r in repo.game_results()] == ["normal"]


def test_void_policy_keeps_the_forfeit_out_of_results(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Under the "void" forfeit policy a TLE is stored with its verdict, holds its slot (it
    is not replayed) and reaches the ratings as a voided forfeit."""
    t_id, p_id = _tournament(repo, versions, ForfeitPolicy.VOID)
    tle = repo.record_game(
        make_game(versions[:2], pairing_id=p_id, verdict=Verdict.TIME, winner=1, offender=0)
    )
    assert tle.voided and tle.counted and tle.offender_seat == 0
    assert repo.get_pairing(p_id).finished_games == (0,)
    [result] = repo.game_results(tournament_id=t_id)
    assert (result.first, result.second) == ("alpha@1.0", "beta@1.0")
    assert (result.score, result.verdict, result.forfeit, result.void) == (0.0, "time", True, True)
    assert repo.count_games(tournament_id=t_id) == 0
    assert repo.count_games(tournament_id=t_id, counted_only=False) == 1


def test_loss_policy_counts_the_forfeit(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Under the "loss" forfeit policy an MLE is a rated loss for the offender."""
    t_id, p_id = _tournament(repo, versions, ForfeitPolicy.LOSS)
    mle = repo.record_game(
        make_game(versions[:2], pairing_id=p_id, verdict=Verdict.MEMORY, winner=0, offender=1)
    )
    assert not mle.voided
    [result] = repo.game_results(tournament_id=t_id)
    assert (result.score, result.forfeit, result.void) == (1.0, True, False)
    assert repo.count_games(tournament_id=t_id) == 1


def test_games_that_do_not_fit_their_pairing_are_refused(
    db: Database, repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Wrong bots, an out-of-range game index or a void pairing: refused, nothing written."""
    _, p_id = _tournament(repo, versions)
    with pytest.raises(ValueError, match="not the bots"):
        repo.record_game(make_game([versions[0], versions[2]], pairing_id=p_id))
    with pytest.raises(ValueError, match="out of range"):
        repo.record_game(make_game(versions[:2], pairing_id=p_id, game_index=2))
    repo.void_pairing(p_id, "beta withdrew")
    with pytest.raises(PairingStateError):
        repo.record_game(make_game(versions[:2], pairing_id=p_id))
    assert _table_counts(db) == (0, 0)
    assert repo.get_pairing(p_id).status_reason == "beta withdrew"


def test_friendly_games_need_no_tournament(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """A one-off match (``referee match``) is stored without tournament or pairing and is
    listed per bot version."""
    game = make_game(versions[2:4], winner=None)
    stored = repo.record_game(
        replace(game, seats=[*game.seats[:1], SeatResult(versions[3], time_used_s=2.5)])
    )
    assert stored.result == "1/2-1/2" and stored.counted
    assert stored.seats[1].memory_measure is MemoryMeasure.UNKNOWN
    assert [g.id for g in repo.list_games(bot_version_id=versions[3])] == [stored.id]
    assert repo.list_games(bot_version_id=versions[0]) == []


def test_a_game_id_is_stored_once(
    db: Database, repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """A write retried with the same wire game id (uid) is refused, so a retry after a lost
    reply cannot count a one-off or ladder game twice."""
    game = replace(make_game(versions[:2]), uid="game-42")
    repo.record_game(game)
    with pytest.raises(ConflictError):
        repo.record_game(game)
    assert _table_counts(db) == (1, 2)
    assert repo.get_game("game-42").summary.uid == "game-42"


def test_validation_games_are_kept_but_never_rated_or_listed(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """A validation game is stored with its record and seats, readable by id, but left out of
    results, counts, public game lists and the web's tables; a rated game beside it is not."""
    from referee.storage.browse import played_games, recent_games
    from referee.storage.enums import GameKind

    rated = repo.record_game(make_game(versions[:2], winner=0))
    check = repo.record_game(replace(make_game(versions[:2], winner=1), kind=GameKind.VALIDATION))
    assert check.kind is GameKind.VALIDATION and rated.kind is GameKind.RATED
    assert repo.get_game(check.uid).record_text == make_game(versions[:2]).record_text
    assert [g.uid for g in repo.list_games()] == [rated.uid]
    both = repo.list_games(include_validation=True, bot_version_id=versions[0])
    assert [g.uid for g in both] == [rated.uid, check.uid]
    assert len(repo.game_results()) == 1 and repo.count_games() == 1
    assert [g.id for g in played_games(repo)] == [rated.id]
    assert [g.uid for g in recent_games(repo)] == [rated.uid]
