"""``referee replay FILE --ply N --board`` (the README's line) shows one board, the one after
move N; ``--all`` shows every position in turn, up to ``--ply N`` when given."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.records import RecordBuilder, positions, read_record, write_record
from engine.registry import load_game
from referee.commands.main import main


def _record(tmp_path: Path, plies: int = 6) -> Path:
    game = load_game("tetress")
    builder = RecordBuilder(game, players=("a", "b"))
    state = game.new_state()
    for _ in range(plies):
        legal = sorted(state.legal_moves, key=str)
        move = legal[len(legal) // 2]
        builder.add(move)
        state.apply(move)
    path = tmp_path / "g.pgn"
    path.write_text(write_record(builder.finish(result="*")))
    return path


def test_ply_with_board_prints_one_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--ply 3 --board``: the board after move 3 once, no board before it."""
    path = _record(tmp_path)
    boards = [p.render() for p in positions(read_record(path.read_text()))]
    assert main(["replay", str(path), "--ply", "3", "--board"]) == 0
    out = capsys.readouterr().out
    assert "position after 3 moves" in out
    assert out.count(boards[3]) == 1
    assert boards[2] not in out and boards[1] not in out


def test_all_prints_every_position_up_to_ply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--all --ply 3``: the start and the boards after moves 1, 2 and 3, each after its
    move; nothing later."""
    path = _record(tmp_path)
    boards = [p.render() for p in positions(read_record(path.read_text()))]
    assert main(["replay", str(path), "--all", "--ply", "3"]) == 0
    out = capsys.readouterr().out
    for board in boards[:4]:
        assert board in out
    assert boards[4] not in out
    assert "\n3. " in out and "\n4. " not in out
