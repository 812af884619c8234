"""Real stored games for the web tests: engine-played games recorded through the repository."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import update

from engine.adjudication.verdicts import Verdict
from engine.records import RecordBuilder, record_to_json, write_record
from engine.registry import load_game
from referee.storage import (
    BotVersionInfo,
    FinishedGame,
    Repository,
    SeatResult,
    SourceKind,
    TournamentFormat,
    TournamentSettings,
)
from referee.storage.games import GameSummary
from referee.storage.models import Bot
from referee.tools.sdkwheel import CACHE_ENV

ROOT = Path(__file__).resolve().parents[2]
#: A bot name with markup in it (stored before the name rules refused it): every page must show
#: it as text.
HOSTILE = '<script>alert("x")</script>'


def play(game_name: str, seed: int, players: tuple[str, str]) -> dict[str, Any]:
    """One game of random legal moves to its end under the rules, with its record."""
    game = load_game(game_name)
    rng = random.Random(seed)
    state = game.new_state()
    builder = RecordBuilder(game, players=players, event="web tests")
    moves = []
    clocks = [60.0, 60.0]
    while state.outcome() is None:
        move = rng.choice(list(state.legal_moves))
        seat = state.to_move
        think = round(rng.uniform(0.01, 0.2), 4)
        clocks[seat] = round(clocks[seat] - think, 3)
        ply = state.ply
        builder.add(
            move,
            think=think,
            clock=clocks[seat],
            mem=40.0 + ply / 10,
            annotation="!" if ply == 2 else None,
            comment="a fine move" if ply == 2 else "",
        )
        moves.append(
            {
                "ply": ply,
                "seat": seat,
                "move": game.move_to_text(move),
                "measured_s": think,
                # As the referee stores a launched bot's move: charged on a CPU clock, with
                # its wall time beside it.
                "wall_s": round(think * 3, 4),
                "cpu_s": think,
                "memory_bytes": int((40.0 + ply / 10) * 2**20),
            }
        )
        state.apply(move)
    outcome = state.outcome()
    assert outcome is not None
    record = builder.finish(reason=f"{outcome.termination.value}")
    return {
        "moves": moves,
        "winner": outcome.winner,
        "termination": outcome.termination.value,
        "record_text": write_record(record),
        "record_json": {
            **record_to_json(record),
            "referee": {"time_control": {"game_time_s": 60.0}, "clock": "cpu"},
        },
    }


def _stored_before_the_name_rules(repo: Repository, owner: str, name: str) -> BotVersionInfo:
    """A bot whose name registration would refuse today (a database from before the name
    rules): the pages must still show it as text."""
    version = repo.add_bot_version(
        "renamed", "v1", source_kind=SourceKind.REMOTE, location="-", owner=owner
    )
    with repo.db.write() as s:
        s.execute(update(Bot).where(Bot.name == "renamed").values(name=name))
    return repo.get_bot_version(version.id)


def populate(path: Path | str, games: int = 12) -> dict[str, Any]:
    """A SQLite file with two players, four bots (one with a hostile name), a tournament and
    ``games`` Tetress games plus two ATT games. Returns the ids the tests use."""
    repo = Repository.open(str(path))
    alice = repo.create_player("alice")
    bob = repo.create_player("bob")
    token = repo.issue_token("alice", label="web tests")
    versions = [
        repo.add_bot_version(
            "alpha", "v1", source_kind=SourceKind.REMOTE, location="-", owner="alice"
        ),
        repo.add_bot_version(
            "beta", "v1", source_kind=SourceKind.REMOTE, location="-", owner="bob"
        ),
        _stored_before_the_name_rules(repo, "bob", HOSTILE),
        repo.add_bot_version(
            "alpha", "v2", source_kind=SourceKind.REMOTE, location="-", owner="alice"
        ),
    ]
    tournament = repo.create_tournament(
        TournamentSettings(name="Week 1", format=TournamentFormat.ROUND_ROBIN, game="tetress"),
        [v.id for v in versions[:3]],
    )
    start = datetime(2026, 11, 1, tzinfo=UTC)
    ids = []
    for i in range(games + 2):
        game_name = "tetress" if i < games else "att"
        a, b = versions[i % 4], versions[(i + 1 + i // 4) % 4]
        if a.id == b.id:
            b = versions[(i + 2) % 4]
        played = play(game_name, i, (a.label, b.label))
        when = start + timedelta(minutes=i)
        summary = repo.record_game(
            FinishedGame(
                game=game_name,
                seats=[
                    SeatResult(
                        a.id,
                        stderr=f"alpha's secret debug line {i}"
                        if a.bot_name == "alpha"
                        else f"other output {i}",
                        failure_pack=_pack(a.bot_name, i),
                    ),
                    SeatResult(
                        b.id,
                        stderr=f"alpha's secret debug line {i}"
                        if b.bot_name == "alpha"
                        else f"other output {i}",
                        failure_pack=_pack(b.bot_name, i),
                    ),
                ],
                verdict=Verdict.NORMAL,
                winner_seat=played["winner"],
                plies=len(played["moves"]),
                started_at=when,
                finished_at=when + timedelta(seconds=30),
                reason=f"game {i} ended: {played['termination']}",
                termination=played["termination"],
                moves=played["moves"],
                record_text=played["record_text"],
                record_json=played["record_json"],
                tournament_id=tournament.id if i < 3 else None,
            )
        )
        ids.append(summary.id)
    repo.close()
    return {
        "token": token,
        "alice": alice.id,
        "bob": bob.id,
        "versions": [v.id for v in versions],
        "bots": {v.bot_name: v.bot_id for v in versions},
        "tournament": tournament.id,
        "games": ids,
    }


def store_game(
    repo: Repository,
    a: BotVersionInfo,
    b: BotVersionInfo,
    seed: int,
    *,
    slower: float = 1.0,
    peak_mb: float | None = None,
) -> int:
    """One rated Tetress game between ``a`` and ``b``, stored now; its id. ``a``'s move times
    are ``slower`` times what was played; ``peak_mb`` is its peak memory when given."""
    played = play("tetress", seed, (a.label, b.label))
    for move in played["moves"]:
        if move["seat"] == 0:
            move["measured_s"] = round(move["measured_s"] * slower, 4)
    now = datetime.now(UTC)
    peak = int(peak_mb * 2**20) if peak_mb is not None else None
    summary = repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(a.id, peak_memory_bytes=peak), SeatResult(b.id)],
            verdict=Verdict.NORMAL,
            winner_seat=played["winner"],
            plies=len(played["moves"]),
            started_at=now - timedelta(seconds=30),
            finished_at=now,
            reason=f"ended: {played['termination']}",
            termination=played["termination"],
            moves=played["moves"],
            record_text=played["record_text"],
            record_json=played["record_json"],
        )
    )
    return summary.id


def _pack(bot: str, game: int) -> str:
    """A stand-in failure pack (the web serves it as stored, it never reads it)."""
    return json.dumps({"format": "tetromino-failure-pack", "of": f"{bot}'s pack {game}"})


def sign_in(client: Any, token: str) -> Any:
    """Sign in through the form of a Starlette test client, CSRF token and all."""
    page = client.get("/signin")
    csrf = page.cookies.get("arena_csrf") or client.cookies.get("arena_csrf")
    return client.post("/signin", data={"token": token, "csrf_token": csrf})


def bot_zip(folder: Path = ROOT / "client_sdk" / "examples" / "course_greedy") -> bytes:
    """A course-style bot package as a student zips it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*.py")):
            archive.write(path, f"agent/{path.relative_to(folder)}")
    return buffer.getvalue()


def alphas_game(
    repo: Repository, ids: dict[str, Any], alpha_seat: dict[str, Any], **changes: Any
) -> GameSummary:
    """A game of alpha's (alice's, seat 0; ``alpha_seat``: its :class:`SeatResult`'s fields)
    against another player's bot, as the site's first game went but for ``changes`` (e.g.
    ``kind``, ``verdict``) to the stored fields."""
    rated = repo.get_game(ids["games"][0])
    alpha = next(v for v in repo.list_bot_versions() if v.bot_name == "alpha")
    other = next(v for v in repo.list_bot_versions() if v.owner_id != alpha.owner_id)
    fields: dict[str, Any] = {
        "game": rated.summary.game,
        "seats": [SeatResult(alpha.id, **alpha_seat), SeatResult(other.id)],
        "verdict": rated.summary.verdict,
        "winner_seat": rated.summary.winner_seat,
        "plies": rated.summary.plies,
        "started_at": rated.summary.started_at,
        "finished_at": rated.summary.finished_at,
        "record_text": rated.record_text,
    }
    return repo.record_game(FinishedGame(**{**fields, **changes}))


@contextmanager
def web_front(db: Path) -> Iterator[str]:
    """``referee web`` over the database ``db`` (its token key beside it); its address."""
    address = db.with_name("url")
    command = [sys.executable, "-m", "referee.commands.main", "web", "--db", str(db)]
    command += ["--listen", "127.0.0.1:0", "--address-file", str(address)]
    # /sdk builds the SDK's wheel: into the test's folder, not the user's cache.
    env = {**os.environ, CACHE_ENV: str(db.with_name("sdk-cache"))}
    proc = subprocess.Popen(command, cwd=db.parent, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (address.exists() and address.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < deadline, "referee web did not start"
            time.sleep(0.1)
        yield address.read_text().strip()
    finally:
        proc.terminate()
        proc.wait(20)


def site_copy(site_template: tuple[Path, dict[str, Any]], folder: Path) -> Path:
    """A copy of the populated database (and its token key) in ``folder``."""
    db = folder / "site.db"
    shutil.copy(site_template[0], db)
    shutil.copy(site_template[0].with_name("site.db.token-key"), folder / "site.db.token-key")
    return db
