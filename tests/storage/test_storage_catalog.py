"""Bots and their versions, tournaments and their settings, rating snapshots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from referee.storage import (
    ConflictError,
    ForfeitPolicy,
    NotFoundError,
    RatingInput,
    Repository,
    SourceKind,
    TournamentFormat,
    TournamentSettings,
    TournamentStatus,
)


def test_bot_versions_are_immutable(repo: Repository) -> None:
    """Registering a version again with the same code returns it; with other code it is a
    conflict (ratings must never mix two bodies of code under one name)."""
    first = repo.add_bot_version(
        "greedy", "1.0", source_kind=SourceKind.PACKAGE, location="/bots/greedy", content_hash="h1"
    )
    again = repo.add_bot_version(
        "greedy", "1.0", source_kind=SourceKind.PACKAGE, location="/bots/greedy", content_hash="h1"
    )
    assert again == first and first.label == "greedy@1.0"
    with pytest.raises(ConflictError):
        repo.add_bot_version(
            "greedy",
            "1.0",
            source_kind=SourceKind.PACKAGE,
            location="/bots/greedy",
            content_hash="h2",
        )
    second = repo.add_bot_version(
        "greedy", "1.1", source_kind=SourceKind.PACKAGE, location="/bots/greedy", content_hash="h2"
    )
    assert second.bot_id == first.bot_id
    assert repo.find_bot_version("greedy") == second
    assert repo.find_bot_version("greedy", "1.0") == first
    assert repo.get_bot_version(first.id) == first
    assert [v.version for v in repo.list_bot_versions("greedy")] == ["1.0", "1.1"]
    with pytest.raises(NotFoundError):
        repo.find_bot_version("greedy", "9.9")


def test_every_source_kind_and_owners(repo: Repository) -> None:
    """Each source kind is stored as given; a bot belongs to one player at most."""
    repo.create_player("ann")
    repo.create_player("bob")
    for kind in SourceKind:
        v = repo.add_bot_version(f"bot-{kind}", "v1", source_kind=kind, location="x", owner="ann")
        assert v.source_kind is kind and v.owner_id == repo.get_player("ann").id
    with pytest.raises(ConflictError):
        repo.add_bot_version(
            "bot-remote", "v2", source_kind=SourceKind.REMOTE, location="x", owner="bob"
        )


def test_tournament_settings_round_trip(repo: Repository, versions: list[int]) -> None:
    """Every setting comes back as given; entrants come back in seed order; status changes
    stamp the start and finish times."""
    settings = TournamentSettings(
        name="gauntlet-1",
        format=TournamentFormat.GAUNTLET,
        game="att",
        game_params={"max_placer_turns": 100},
        time_control={"per_game": 60.0, "per_move": 2.0, "increment": 0.5, "grace": 0.2},
        memory_limit_mb=250,
        cycles=None,
        rounds=3,
        games_per_pairing=2,
        forfeit_policy=ForfeitPolicy.VOID,
        concurrency=4,
        options={"focus": "alpha@1.0"},
    )
    entrants = [versions[2], versions[0], versions[1]]
    created = repo.create_tournament(settings, entrants)
    assert created.settings == settings and created.status is TournamentStatus.CREATED
    assert repo.get_tournament("gauntlet-1") == created == repo.get_tournament(created.id)
    assert [v.id for v in repo.tournament_entrants(created.id)] == entrants
    running = repo.set_tournament_status(created.id, TournamentStatus.RUNNING)
    assert running.started_at is not None and running.finished_at is None
    done = repo.set_tournament_status(created.id, TournamentStatus.FINISHED)
    assert done.started_at == running.started_at and done.finished_at is not None
    assert [t.name for t in repo.list_tournaments()] == ["gauntlet-1"]
    with pytest.raises(ConflictError):
        repo.create_tournament(settings, entrants)
    with pytest.raises(NotFoundError):
        repo.get_tournament("nope")


def test_unknown_entrant_leaves_no_tournament(repo: Repository, versions: list[int]) -> None:
    """A tournament naming a missing bot version is not created at all."""
    settings = TournamentSettings(name="bad", format=TournamentFormat.SWISS, game="tetress")
    with pytest.raises(NotFoundError):
        repo.create_tournament(settings, [versions[0], 12345])
    assert repo.list_tournaments() == []
    with pytest.raises(ConflictError):
        repo.create_tournament(settings, [versions[0], versions[0]])


def test_rating_snapshots(repo: Repository, versions: list[int]) -> None:
    """Rating tables are stored per tournament or per ladder; the newest one is returned,
    older ones stay as history."""
    t = repo.create_tournament(
        TournamentSettings(name="rr", format=TournamentFormat.ROUND_ROBIN, game="tetress"),
        versions,
    )
    base = datetime(2026, 11, 21, 12, tzinfo=UTC)
    old = repo.save_ratings(
        "ml_elo",
        [RatingInput(versions[0], 1500.0, 1450.0, 1550.0, games=10)],
        tournament_id=t.id,
        anchor="mean 1500",
        games_counted=10,
        taken_at=base,
    )
    new = repo.save_ratings(
        "ml_elo",
        [
            RatingInput(versions[1], 1580.0, 1530.0, 1630.0, games=20),
            RatingInput(versions[0], 1420.0, 1370.0, 1470.0, games=20),
        ],
        tournament_id=t.id,
        anchor="mean 1500",
        games_counted=20,
        taken_at=base + timedelta(minutes=5),
    )
    table = repo.latest_ratings("ml_elo", tournament_id=t.id)
    assert table is not None and table.snapshot_id == new and table.taken_at.tzinfo is not None
    assert [(r.rank, r.bot_version_id, r.rating) for r in table.rows] == [
        (1, versions[1], 1580.0),
        (2, versions[0], 1420.0),
    ]
    assert (table.rows[0].ci_low, table.rows[0].ci_high) == (1530.0, 1630.0)
    history = repo.rating_history("ml_elo", tournament_id=t.id)
    assert [h.snapshot_id for h in history] == [new, old]
    assert repo.latest_ratings("k_elo", tournament_id=t.id) is None

    repo.save_ratings(
        "openskill",
        [RatingInput(versions[3], 18.2, mu=25.0, sigma=2.27, games=3, provisional=True)],
        ladder="main",
    )
    ladder = repo.latest_ratings("openskill", ladder="main")
    assert ladder is not None and ladder.tournament_id is None
    [row] = ladder.rows
    assert (row.mu, row.sigma, row.provisional) == (25.0, 2.27, True)
    with pytest.raises(ValueError):
        repo.save_ratings("openskill", [], ladder="main", tournament_id=t.id)
