"""Hostile names through every CLI table: a database holding names from before the name rules
(and free text that is still free: token labels, tournament names, reasons) prints with no
terminal escape, no markup taking effect, no bidi override and no name broken over lines."""

from __future__ import annotations

import asyncio
import io
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from engine.adjudication.verdicts import Verdict
from engine.registry import load_game
from referee.commands.main import main
from referee.live.hub import LiveHub
from referee.rpc.arena import ArenaService
from referee.server.app import RefereeServer
from referee.storage import (
    FinishedGame,
    Repository,
    SeatResult,
    SourceKind,
    TournamentFormat,
    TournamentSettings,
)
from referee.storage.models import Bot, Player, Token, Tournament
from referee.telemetry import logs

CLEAR = "\x1b[2Jclear"
LINK = "\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07"
MARKUP = "[red]forged[/red]"
NEWLINE = "first\nsecond"
RTL = "rtl\u202eevil"
BIG = "B" * 10_000
HOSTILE = [CLEAR, LINK, MARKUP, NEWLINE, RTL, BIG]


def _hostile_db(path: Path) -> dict[str, Any]:
    """Players, bots, a token label and a tournament named with :data:`HOSTILE` (written past
    the registration rules, as an old database holds them), and games between the bots."""
    repo = Repository.open(str(path))
    versions = []
    for i in range(len(HOSTILE)):
        repo.create_player(f"p{i}")
        repo.issue_token(f"p{i}", label=f"label{i}")
        versions.append(
            repo.add_bot_version(f"b{i}", "1", source_kind=SourceKind.REMOTE, location="-")
        )
    t = repo.create_tournament(
        TournamentSettings(name="t", format=TournamentFormat.ROUND_ROBIN, game="tetress"),
        [v.id for v in versions],
    )
    with repo.db.write() as s:
        for i, name in enumerate(HOSTILE):
            s.execute(update(Player).where(Player.name == f"p{i}").values(name=name))
            s.execute(update(Bot).where(Bot.name == f"b{i}").values(name=name))
            s.execute(update(Token).where(Token.label == f"label{i}").values(label=name))
        s.execute(update(Tournament).where(Tournament.name == "t").values(name=MARKUP + CLEAR))
    start = datetime(2026, 11, 1, tzinfo=UTC)
    uids = []
    for i, (a, b) in enumerate(zip(versions, versions[1:] + versions[:1], strict=True)):
        uids.append(
            repo.record_game(
                FinishedGame(
                    game="tetress",
                    seats=[SeatResult(a.id, stderr=CLEAR), SeatResult(b.id, stderr=LINK)],
                    verdict=Verdict.ILLEGAL_MOVE,
                    winner_seat=1,
                    offender_seat=0,
                    plies=0,
                    started_at=start + timedelta(minutes=i),
                    finished_at=start + timedelta(minutes=i, seconds=5),
                    reason=f"RED returned {HOSTILE[i]}, which is not a move",
                    tournament_id=t.id,
                )
            ).uid
        )
    repo.close()
    return {"uids": uids}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Any]]]:
    db = tmp_path_factory.mktemp("hostile") / "arena.db"
    facts = _hostile_db(db)
    yield str(db), facts


def _assert_safe(out: str, what: str) -> None:
    """No escape, control or bidi character; markup shown as text; names on one line."""
    for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert bad not in out, (what, bad)
    assert "[/red]" in out or "forged" not in out, (what, "markup took effect")
    for line in out.splitlines():
        assert line.strip() != "second" and not line.lstrip("│┃ ").startswith("second"), what
    assert len(out) < 40_000, (what, len(out))


TABLES = {
    "player list": ["player", "list"],
    "bot list": ["bot", "list"],
    "bot show": ["bot", "show", NEWLINE],
    "game show --output": ["game", "show", "1", "--output"],
    "games": ["games"],
    "games of a tournament": ["games", "--tournament", "1"],
    "leaderboard": ["leaderboard", "1", "--cross", "--los"],
    "leaderboard of all games": ["leaderboard"],
    "leaderboard --ladder": ["leaderboard", "--ladder", "main"],
    "tournament list": ["tournament", "list"],
    "tournament show": ["tournament", "show", "1", "--rounds"],
}


@pytest.mark.parametrize("argv", list(TABLES.values()), ids=list(TABLES))
def test_every_cli_table_prints_hostile_names_safely(
    hostile: tuple[str, dict[str, Any]], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Each table shows the hostile names (cleaned: ``[red]`` literally, the newline a
    space) and nothing a terminal would act on."""
    db, _ = hostile
    assert main([*argv, "--db", db]) == 0
    out = capsys.readouterr().out
    _assert_safe(out, " ".join(argv))
    if argv[0] in ("player", "bot", "games"):
        assert MARKUP in out and "first second" in out and "rtlevil" in out


def _serve(db: str) -> Iterator[str]:
    """A real Arena server over ``db`` on 127.0.0.1:0, in a thread of its own, with one live
    game between hostile names."""
    ready: list[str] = []
    stop = threading.Event()
    started = threading.Event()

    async def run() -> None:
        hub = LiveHub()
        start = load_game("tetress").new_state().to_string()
        hub.start("live-1", "tetress", [MARKUP, NEWLINE + CLEAR], ["RED", "BLUE"], start)
        server = RefereeServer(services=[ArenaService(Repository.open(db), hub)])
        ready.append(await server.start("127.0.0.1:0"))
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(run(),), daemon=True)
    thread.start()
    assert started.wait(30)
    try:
        yield ready[0]
    finally:
        stop.set()
        thread.join(30)


def test_watch_prints_a_hostile_game_safely(
    hostile: tuple[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """``watch`` of a stored game whose players and reason are hostile, and ``watch --list``
    of a live one, print them cleaned."""
    db, facts = hostile
    for address in _serve(db):
        for uid in facts["uids"]:
            assert main(["watch", uid, "--server", address]) == 0
        assert main(["watch", "--list", "--server", address]) == 0
    out = capsys.readouterr().out
    _assert_safe(out, "watch")
    assert "RED returned [red]forged[/red], which is not a move" in out
    assert "first second" in out
    assert "live-1  tetress  casual         [red]forged[/red] vs first secondclear" in out


def test_log_lines_escape_hostile_text() -> None:
    """Both log formats write a hostile value escaped: JSON strings, or repr on the console."""
    for fmt in ("json", "console"):
        out = io.StringIO()
        logs.configure(fmt, stream=out)  # type: ignore[arg-type]
        logs.get_logger("test").info("session_open", bot=CLEAR + LINK + NEWLINE + RTL)
        text = out.getvalue()
        assert text.count("\n") == 1, fmt
        for bad in ("\x1b", "\x07", "\u202e"):
            assert bad not in text, (fmt, bad)
    logs.configure("console")


def test_every_cli_table_is_a_safe_table() -> None:
    """No module of the referee builds a plain rich Table: each goes through SafeTable, so a
    new table cannot print outside text raw."""
    root = Path(__file__).resolve().parents[2] / "referee"
    plain = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "_safe.py"
        and re.search(
            r"from rich\.table import [^\n]*\bTable\b|rich\.table\.Table", path.read_text()
        )
    ]
    assert plain == []
