"""Game pages that say why: think records and who sees them, the summary and its turning point,
the chart, the move rows for notebooks, the bot page's matchups and time profiles, the
head-to-head page and the opening explorer (Starlette test client over a real SQLite file)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.testclient import TestClient
from webdata import sign_in

from engine.adjudication.verdicts import Verdict
from engine.records import RecordBuilder, SearchInfo, record_to_json, write_record
from engine.registry import load_game
from referee.analysis.gameeval import WIN, Analysis, Analyst, PlyEval
from referee.commands.main import main as referee_main
from referee.live.hub import LiveHub
from referee.storage import FinishedGame, Repository, SeatResult
from referee.storage.browse import VersionName
from referee.storage.enums import Role
from referee.web.app import create_app
from referee.web.botstory import BotGame, head_to_head, matchups, time_profiles
from referee.web.context import WebSettings
from referee.web.story import move_sentence, tell, turning_point
from referee.web.thinking import PublishThinking


def _thinking_game(repo: Repository, ids: dict[str, Any], seed: int = 11) -> int:
    """A random Tetress game between alice's alpha (RED) and bob's beta (BLUE), each move with a
    think record (its PV starts with the move and goes on with a legal reply)."""
    game = load_game("tetress")
    rng = random.Random(seed)
    state = game.new_state()
    builder = RecordBuilder(game, players=("alpha@v1", "beta@v1"))
    moves = []
    while state.outcome() is None:
        move = rng.choice(list(state.legal_moves))
        after = state.copy()
        after.apply(move)
        line = [state.san(move)]
        if not after.is_over():
            line.append(after.san(next(iter(after.legal_moves))))
        seat = state.to_move
        search = SearchInfo(3 + seat, 1000 * state.ply, 10.0 - state.ply, tuple(line), f"s{seat}")
        builder.add(move, think=0.05, clock=60.0 - state.ply, mem=40.0, search=search)
        moves.append(
            {
                "ply": state.ply,
                "seat": seat,
                "move": game.move_to_text(move),
                "measured_s": 0.05,
                "memory_bytes": 40 << 20,
            }
        )
        state.apply(move)
    record = builder.finish()
    outcome = state.outcome()
    assert outcome is not None
    now = datetime(2026, 11, 20, tzinfo=UTC)
    versions = ids["versions"]
    summary = repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(versions[0]), SeatResult(versions[1])],
            verdict=Verdict.NORMAL,
            winner_seat=outcome.winner,
            plies=len(moves),
            started_at=now,
            finished_at=now,
            moves=moves,
            record_text=write_record(record),
            record_json=record_to_json(record),
        )
    )
    return summary.id


def _client(repo: Repository, **settings: Any) -> TestClient:
    base = {"secret": b"test-secret-0123456789abcdef", "refresh_s": 0.0, "analysis": "off"}
    return TestClient(create_app(repo, LiveHub(), WebSettings(**{**base, **settings})))


@pytest.fixture
def thinking(repo: Repository, ids: dict[str, Any]) -> Iterator[tuple[Repository, int]]:
    yield repo, _thinking_game(repo, ids)


def test_think_records_are_shown_per_seat_to_owner_and_instructor_only(
    thinking: tuple[Repository, int], ids: dict[str, Any]
) -> None:
    """Outside a closed tournament a visitor sees no think record anywhere (page, ghosts, API
    rows, both record downloads); alice sees her bot's and not bob's; an instructor sees both;
    with --publish-thinking always everyone does."""
    repo, game_id = thinking
    with _client(repo) as visitor:
        page = visitor.get(f"/games/{game_id}?ply=1").text
        assert 'id="think-hidden"' in page and 'id="pv"' not in page and 'class="ghost' not in page
        rows = visitor.get(f"/api/games/{game_id}").json()["rows"]
        assert rows and all(row["search"] is None for row in rows)
        assert "pv=" not in visitor.get(f"/games/{game_id}/record.pgn").text
        assert '"search"' not in visitor.get(f"/games/{game_id}/record.json").text
    with _client(repo) as alice:
        sign_in(alice, ids["token"])
        page = alice.get(f"/games/{game_id}?ply=1").text
        assert 'id="pv"' in page and 'class="ghost' in page
        assert 'id="think-hidden"' in alice.get(f"/games/{game_id}?ply=2").text
        rows = alice.get(f"/api/games/{game_id}").json()["rows"]
        assert rows[0]["search"]["depth"] == 3 and rows[1]["search"] is None
        text = alice.get(f"/games/{game_id}/record.pgn").text
        assert "text=s0" in text and "text=s1" not in text
    teacher = repo.issue_token("bob", label="teaching", role=Role.INSTRUCTOR)
    with _client(repo) as instructor:
        sign_in(instructor, teacher)
        rows = instructor.get(f"/api/games/{game_id}").json()["rows"]
        assert all(row["search"] is not None for row in rows)
    with _client(repo, publish_thinking=PublishThinking.ALWAYS) as public:
        assert 'id="pv"' in public.get(f"/games/{game_id}?ply=2").text


def test_the_chart_links_every_ply_and_marks_the_current_one(
    thinking: tuple[Repository, int],
) -> None:
    """One SVG chart: a link per ply (0..plies) to the replay, the marker at the shown ply,
    panels for the bots' scores and depth (when visible), legal moves, time, memory, clock."""
    repo, game_id = thinking
    with _client(repo, publish_thinking=PublishThinking.ALWAYS) as client:
        plies = client.get(f"/api/games/{game_id}").json()["rows"][-1]["ply"]
        page = client.get(f"/games/{game_id}?ply=3").text
    assert page.count('class="ply-link"') == plies + 1
    assert f'href="/games/{game_id}?ply=3"' in page
    for title in ("own score", "Search depth", "Legal moves", "Move time", "Memory", "Clock"):
        assert title in page
    assert page.count('class="now"') == 1
    assert "not available" in page  # no reference evaluation with analysis off


def test_the_reference_evaluation_is_computed_once_in_the_background_and_kept(
    thinking: tuple[Repository, int],
) -> None:
    """The first view queues the game; once analysed the summary names a turning point with a
    link, the move list carries marks with sentences (for anonymous readers as soon as the
    page kept while it was computed is past the short interval and its stale bound), and the
    analysis is stored in the game's JSON record (a new front reads it without analysing
    again)."""
    repo, game_id = thinking
    now = [100.0]
    with _client(repo, page_cache_s=2.0, game_page_cache_s=30.0, page_stale_s=10.0) as client:
        web = client.app.state.web  # type: ignore[attr-defined]
        web.pages.clock = lambda: now[0]
        web.analyst = Analyst(store=web._store_analysis, nodes=60, mode="thread")
        first = client.get(f"/games/{game_id}").text
        assert "being computed" in first
        deadline = time.monotonic() + 300
        while web.analyst.pending(game_id):
            assert time.monotonic() < deadline, "the analysis did not finish"
            time.sleep(0.2)
        now[0] += 2.0 + 10.0 + 0.1
        page = client.get(f"/games/{game_id}").text
    assert "Turning point, ply " in page and 'class="turning"' in page
    stored = repo.get_game(game_id).record_json
    assert stored is not None and stored["analysis"]["moves"]
    with _client(repo) as fresh:
        assert "Turning point, ply " in fresh.get(f"/games/{game_id}").text
        rows = fresh.get(f"/api/games/{game_id}").json()["rows"]
        assert all(row["reference"] is not None for row in rows)


def test_the_turning_point_is_the_biggest_swing_against_the_loser() -> None:
    """From the loser's side the evaluation drops most at ply 6 (the opening plies never
    count); marked moves read as sentences, forced results in words, never sentinel numbers."""
    evals = {p: PlyEval(p, v, v + 1, "X", None) for p, v in enumerate([5, -5, 4, -4, 3, 90], 1)}
    movers = [0, 1, 0, 1, 0, 1]
    analysis = Analysis(100, evals)
    ply, _ = turning_point(analysis, movers, loser=0)  # type: ignore[misc]
    assert ply == 6
    story = tell(
        verdict=Verdict.NORMAL,
        sentence="BLUE wins.",
        winner=1,
        offender=None,
        seat_names=("RED", "BLUE"),
        movers=movers,
        moves=["m1", "m2", "m3", "m4", "m5", "m6"],
        analysis=analysis,
    )
    assert story.turning_ply == 6 and story.points[0].text.startswith("Turning point, ply 6")
    missed = move_sentence(PlyEval(4, 3.0, WIN - 1, "PLACE(1-1)", "??"))
    assert missed == "Missed a win in 1: PLACE(1-1) wins."
    walked = move_sentence(PlyEval(4, -(WIN - 2), 4.0, "PLACE(2-2)", "??"))
    assert "a loss in 2" in walked and str(int(WIN)) not in walked


def test_a_fault_is_explained_at_its_ply_with_output_for_the_owner_only() -> None:
    """A time loss names the ply the bot was to play and the verdict; the last output is
    shown when given (its owner, an instructor), else said to be private."""
    story = tell(
        verdict=Verdict.TIME,
        sentence="RED wins (time): BLUE exceeded its time.",
        winner=0,
        offender=1,
        seat_names=("RED", "BLUE"),
        movers=[0, 1, 0],
        moves=["a", "b", "c"],
        analysis=None,
        output="Traceback\nslow",
    )
    assert story.fault_ply == 3 and "BLUE was to play ply 4" in story.points[0].text
    assert story.output.endswith("slow")
    private = tell(
        verdict=Verdict.TIME,
        sentence="s",
        winner=0,
        offender=1,
        seat_names=("RED", "BLUE"),
        movers=[0, 1, 0],
        moves=["a", "b", "c"],
        analysis=None,
    )
    assert private.output == "" and "shown to its owner" in private.points[-1].text


def _name(vid: int, bot: int) -> VersionName:
    return VersionName(vid, bot, f"b{bot}", f"v{vid}", "o", 1)


def _row(vid: int, opp: int, score: float, verdict: str = "normal", **kw: Any) -> BotGame:
    fields = {
        "id": random.randint(1, 10**9),
        "game": "tetress",
        "finished_at": datetime(2026, 1, 1, tzinfo=UTC),
        "verdict": verdict,
        "seat": kw.pop("seat", 0),
        "version_id": vid,
        "opponent_version_id": opp,
        "score": score,
        "at_fault": kw.pop("at_fault", False),
        "plies": 40,
        "peak_memory_bytes": kw.pop("peak", 50 << 20),
        "move_times": kw.pop("times", (0.1,) * 20),
    }
    return BotGame(**fields)


def test_matchups_count_crashes_and_time_losses_and_profiles_flag_regressions() -> None:
    """Per opponent bot: W/D/L, crash and time-loss shares (only the bot's own faults); a
    version twice as slow as the one before is flagged, naming what got worse."""
    names = {1: _name(1, 1), 2: _name(2, 1), 3: _name(3, 2), 4: _name(4, 2)}
    games = [
        _row(1, 3, 1.0),
        _row(1, 4, 0.0, "runtime_error", at_fault=True),
        _row(2, 3, 0.0, "time", at_fault=True, times=(0.3,) * 20),
        _row(2, 3, 0.0, "time", at_fault=False, times=(0.3,) * 20),
        _row(2, 3, 0.5, times=(0.3,) * 20),
    ]
    (row,) = matchups(games, names)
    assert (row.games, row.wins, row.draws, row.losses) == (5, 1, 1, 3)
    assert row.crash_pct == 20.0 and row.time_loss_pct == 20.0
    first, second = time_profiles(games, [names[1], names[2]])
    assert first.regression == "" and first.median_s == pytest.approx(0.1)
    assert "median move time" in second.regression and "3.0x" in second.regression
    h2h = head_to_head(games, [3])
    assert len(h2h.games) == 4 and h2h.cross[(2, 3)] == (0, 1, 2)
    assert h2h.by_seat[0] == (1.5, 4)


def test_bot_page_head_to_head_and_explorer(client: TestClient, ids: dict[str, Any]) -> None:
    """The bot page has its matchups and version profiles (also in its JSON), the
    head-to-head page its cross table and colours, the explorer a tree filtered by bot and
    period (a bad date is a 400)."""
    alpha, beta = ids["bots"]["alpha"], ids["bots"]["beta"]
    page = client.get(f"/bots/{alpha}").text
    assert 'id="matchups-tetress"' in page and 'id="profiles-tetress"' in page
    assert 'class="upload"' in page
    data = client.get(f"/api/bots/{alpha}").json()["games"]["tetress"]
    assert data["matchups"] and {p["version"] for p in data["time_profiles"]} == {"v1", "v2"}
    versus = client.get(f"/bots/{alpha}/vs/{beta}")
    assert versus.status_code == 200 and 'id="h2h-cross"' in versus.text
    h2h = client.get(f"/api/bots/{alpha}/vs/{beta}").json()
    assert h2h["games"] == len(h2h["game_ids"]) > 0
    tree = client.get("/api/explorer/tetress").json()
    assert tree["games"] == 12 and sum(m["games"] for m in tree["moves"]) == 12
    only = client.get(f"/api/explorer/tetress?bot={beta}").json()
    assert 0 < only["games"] < 12
    none = client.get("/api/explorer/tetress?since=2030-01-01").json()
    assert none["games"] == 0 and none["moves"] == []
    assert client.get("/explorer/tetress?since=yesterday").status_code == 400
    assert "Opening explorer" in client.get("/explorer/tetress").text


def test_game_show_json_has_per_move_rows(
    thinking: tuple[Repository, int], site: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``referee game show --json`` prints the per-move rows a notebook reads, think records
    included (the command is the operator's: nothing is hidden)."""
    _, game_id = thinking
    assert referee_main(["game", "show", str(game_id), "--json", "--db", str(site[0])]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["moves"][0]
    assert first["ply"] == 1 and first["seat"] == "RED" and first["search"]["depth"] == 3
    assert first["time_s"] == 0.05 and first["reference"] is None


def test_stored_game_of_a_live_uid_redirects(client: TestClient, repo: Repository) -> None:
    """The live page's end link: a stored game's uid leads to its page; an unknown one is a
    404 saying it is not stored yet."""
    game = repo.list_games()[0]
    found = client.get(f"/games/uid/{game.uid}")
    assert found.status_code == 302 and found.headers["location"] == f"/games/{game.id}"
    assert client.get("/games/uid/nothere").status_code == 404
