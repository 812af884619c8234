"""Output files (``match --record``, ``game export -o``, ``tournament export -o``, ``annotate
-o``, ``replay --svg``) are checked before any work: a bad path is one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.records import RecordBuilder, write_record
from engine.registry import load_game
from referee.commands.main import main


def _record_text() -> str:
    """A short legal Tetress record (three moves)."""
    game = load_game("tetress")
    builder = RecordBuilder(game, players=("a", "b"))
    state = game.new_state()
    for _ in range(3):
        move = sorted(state.legal_moves, key=str)[len(state.legal_moves) // 2]
        builder.add(move)
        state.apply(move)
    return write_record(builder.finish(result="*"))


def _bad_targets(tmp_path: Path) -> list[str]:
    """A file in a folder that does not exist, and a folder."""
    return [str(tmp_path / "no-such-dir" / "g.pgn"), str(tmp_path)]


def test_match_record_to_a_bad_path_is_refused_before_the_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``match --record`` into a missing folder or onto a folder: one line, no game played
    (the bots are not even started), exit code 2."""
    for target in _bad_targets(tmp_path):
        bots = ["client_sdk.examples.random_bot", "client_sdk.examples.greedy_bot"]
        code = main(["match", *bots, "--record", target])
        err = capsys.readouterr().err
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("referee match: --record "), err
        assert target in err and "Traceback" not in err
    # Refused before the bots were load-checked, let alone played: nothing was written.
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_exports_to_a_bad_path_are_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``game export -o``, ``tournament export -o``, ``annotate -o`` and ``replay --svg``: a
    path that cannot be written is one line naming it, before the database is opened or the
    record is read."""
    record = tmp_path / "g.pgn"
    record.write_text(_record_text())
    db = str(tmp_path / "missing.db")
    for target in _bad_targets(tmp_path):
        for argv, command in (
            (["game", "export", "1", "--db", db, "-o", target], "game export"),
            (["tournament", "export", "t", "--db", db, "-o", target], "tournament export"),
            (["annotate", str(record), "-o", target], "annotate"),
            (["replay", str(record), "--svg", target], "replay"),
        ):
            code = main(argv)
            err = capsys.readouterr().err
            assert code == 2, argv
            assert err.count("\n") == 1 and err.startswith(f"referee {command}: "), err
            assert target in err
    assert not (tmp_path / "missing.db").exists()


def test_a_good_export_path_still_writes(tmp_path: Path) -> None:
    """The check refuses nothing writable: ``replay --svg FILE`` in an existing folder works."""
    record = tmp_path / "g.pgn"
    record.write_text(_record_text())
    out = tmp_path / "board.svg"
    assert main(["replay", str(record), "--svg", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<svg")
