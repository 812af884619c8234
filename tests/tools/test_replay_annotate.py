"""``referee replay`` on good and broken records, ``tournament export``-style multi-record
text, and ``referee annotate`` on a game with a known blunder."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.records import RecordBuilder, read_record, record_to_json, write_record
from engine.registry import load_game
from referee.commands.main import main


def _game_with_missed_win() -> tuple[str, int]:
    """A Tetress record whose last move skips a move that would have won at once."""
    game = load_game("tetress")
    for seed in range(400):
        rng = random.Random(seed)
        builder = RecordBuilder(game, players=("a", "b"))
        state = game.new_state()
        while not state.is_over():
            legal = list(state.legal_moves)
            wins = []
            for move in legal:
                state.apply(move)
                outcome = state.outcome()
                state.undo()
                if outcome is not None and outcome.winner == state.to_move:
                    wins.append(move)
            if wins and len(wins) < len(legal) and state.ply >= 20:
                miss = next(m for m in legal if m not in wins)
                builder.add(miss)
                return write_record(builder.finish(result="*")), state.ply + 1
            move = rng.choice(legal)
            builder.add(move)
            state.apply(move)
    pytest.fail("no game with a missed win found")


def test_replay_good_record_prints_the_final_position(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A good record: exit 0, its summary and final position; --ply and --svg work."""
    text, plies = _game_with_missed_win()
    path = tmp_path / "g.pgn"
    path.write_text(text)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"after {plies} moves" in out and "to move" in out
    assert main(["replay", str(path), "--ply", "3"]) == 0
    assert "ply 3" in capsys.readouterr().out
    assert main(["replay", str(path), "--svg", "-"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("<svg")
    json_path = tmp_path / "g.json"
    import json

    json_path.write_text(json.dumps(record_to_json(read_record(text))))
    assert main(["replay", str(json_path)]) == 0


def test_replay_broken_record_lists_every_error_with_line_and_column(
    tmp_path: Path,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    """Two problems (a bad tag line and an illegal move) give two FILE:LINE:COL lines, exit 2."""
    text, _ = _game_with_missed_win()
    lines = text.splitlines()
    lines.insert(1, '[Broken "unterminated]')
    body = next(i for i, line in enumerate(lines) if line.startswith("1. "))
    first = lines[body].split(" ")[1:5]
    lines[body] = lines[body].replace(" ".join(first), "PLACE(0-0, 0-1, 0-2, 0-3)", 1)
    lines[body + 1] = lines[body + 1].replace("PLACE", "PLOCE", 1)
    path = tmp_path / "bad.pgn"
    path.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) >= 2
    for error in errors:
        file, line, column, message = error.split(":", 3)
        assert file == str(path) and int(line) >= 1 and int(column) >= 1 and message.strip()
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"game": "tetress", ')
    assert main(["replay", str(bad_json)]) == 2
    assert ":1:" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing.pgn")]) == 2


def test_annotate_marks_a_missed_win_as_a_blunder(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The move that skips an immediate win gets ``??`` with the winning move named, in the
    record's own syntax (the annotated record reads back); JSON stays JSON."""
    text, plies = _game_with_missed_win()
    path = tmp_path / "g.pgn"
    path.write_text(text)
    out = tmp_path / "a.pgn"
    assert main(["annotate", str(path), "-o", str(out), "--nodes", "300", "-q"]) == 0
    record = read_record(out.read_text())
    last = record.moves[plies - 1]
    assert last.annotation == "??"
    assert "best:" in last.comment
    assert dict(last.extra)["best"].startswith("+W")
    json_in = tmp_path / "g.json"
    import json

    json_in.write_text(json.dumps(record_to_json(read_record(text))))
    json_out = tmp_path / "a.json"
    assert main(["annotate", str(json_in), "-o", str(json_out), "--nodes", "300", "-q"]) == 0
    assert json.loads(json_out.read_text())["moves"][plies - 1]
    capsys.readouterr()


def test_glyph_thresholds() -> None:
    """The documented thresholds: Tetress 6/15/30 (scaled by legal moves / 40 above 40), ATT
    3/8/16; a move into a forced loss is ``??``; two wins differ only in speed (no mark)."""
    from client_sdk.reference import WIN
    from referee.analysis.annotate import glyph_for, threshold_scale

    assert [glyph_for("tetress", 10, 10 - d, False) for d in (5, 6, 15, 30)] == [
        None,
        "?!",
        "?",
        "??",
    ]
    assert [glyph_for("att", 0, -d, False) for d in (2, 3, 8, 16)] == [None, "?!", "?", "??"]
    assert threshold_scale("tetress", 200) == 5.0 and threshold_scale("att", 200) == 1.0
    assert glyph_for("tetress", 100, 100 - 80, False, threshold_scale("tetress", 200)) == "?"
    assert glyph_for("tetress", 1.0, -WIN + 3, False) == "??"
    assert glyph_for("tetress", WIN - 1, WIN - 5, False) is None
    assert glyph_for("tetress", WIN - 1, WIN - 1, True) == "!"
