"""Text (plain and ANSI) and SVG pictures of Tetress and ATT positions."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from engine import State, load_game
from engine.render import last_move_cells, render_svg, render_text

SVG = "{http://www.w3.org/2000/svg}"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def play_random(game_name: str, seed: int, max_plies: int, **params: int) -> State[Any]:
    state = load_game(game_name, **params).new_state()
    rng = random.Random(seed)
    while not state.is_over() and state.ply < max_plies:
        state.apply(rng.choice(list(state.legal_moves)))
    return state


def filled(state: State[Any]) -> int:
    return sum(ch != "." for row in state.grid() for ch in row)


def elements(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def test_tetress_text_has_labels_and_marks_last_move() -> None:
    """Rows and columns 0-10 label the board; the last placement shows as four ``[x]`` cells."""
    state = play_random("tetress", seed=3, max_plies=9)
    text = render_text(state)
    lines = text.splitlines()
    assert lines[0].split() == [str(i) for i in range(11)]
    assert [line.split()[0] for line in lines[1:12]] == [str(i) for i in range(11)]
    assert len(re.findall(r"\[[rb]\]", text)) == 4
    assert "ply 9, BLUE to move; last move PLACE(" in lines[-1]
    assert "\x1b" not in text


def test_att_text_reads_from_the_bottom() -> None:
    """ATT rows are numbered 20 down to 1 and the columns a..m are written under the well."""
    state = play_random("att", seed=1, max_plies=10)
    lines = render_text(state).splitlines()
    assert [line.split()[0] for line in lines[:20]] == [str(20 - i) for i in range(20)]
    assert lines[20].split() == list("abcdefghkm")
    assert len(re.findall(r"\[#\]", "\n".join(lines))) == 4


def test_ansi_text_colours_cells_and_strips_to_the_plain_board() -> None:
    """With colour, cells carry ANSI codes; without them the picture is the plain one's board."""
    state = play_random("tetress", seed=5, max_plies=6)
    plain = render_text(state, highlight_last=False)
    coloured = render_text(state, color=True, highlight_last=False)
    assert "\x1b[1;31m r " in coloured and "\x1b[1;34m b " in coloured
    stripped = [line.rstrip() for line in ANSI.sub("", coloured).splitlines()]
    assert stripped == plain.splitlines()
    marked = render_text(state, color=True)
    assert len(re.findall(r"\x1b\[1;3[14];7m", marked)) == 4


@pytest.mark.parametrize(("game_name", "plies", "cells"), [("tetress", 15, 121), ("att", 21, 200)])
def test_svg_is_well_formed_with_one_piece_per_filled_cell(
    game_name: str, plies: int, cells: int
) -> None:
    """The SVG parses, has every board cell, and one piece element per filled grid cell."""
    state = play_random(game_name, seed=2, max_plies=plies)
    svg = render_svg(state)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert len(elements(svg, "cell")) == cells
    assert len(elements(svg, "piece")) == filled(state) > 0
    assert len(elements(svg, "last")) == 4


def test_svg_tetress_tokens_and_labels() -> None:
    """Tetress draws red and blue circle tokens and labels rows and columns 0-10."""
    state = play_random("tetress", seed=4, max_plies=8)
    svg = render_svg(state)
    grid = state.grid()
    reds = elements(svg, "red")
    blues = elements(svg, "blue")
    assert len(reds) == sum(row.count("r") for row in grid)
    assert len(blues) == sum(row.count("b") for row in grid)
    assert all(e.tag == f"{SVG}circle" for e in reds + blues)
    for e in reds:
        r, c = map(int, e.get("data-cell", "").split(","))
        assert grid[r][c] == "r"
    assert [e.text for e in elements(svg, "col-label")] == [str(i) for i in range(11)]
    assert [e.text for e in elements(svg, "row-label")] == [str(i) for i in range(11)]


def test_svg_att_labels_and_last_piece() -> None:
    """ATT labels columns a..m and rows 20..1, and outlines the last dropped piece."""
    state = play_random("att", seed=6, max_plies=12)
    svg = render_svg(state)
    assert [e.text for e in elements(svg, "col-label")] == list("abcdefghkm")
    assert [e.text for e in elements(svg, "row-label")] == [str(20 - i) for i in range(20)]
    last = {tuple(map(int, e.get("data-cell", "").split(","))) for e in elements(svg, "last")}
    assert last == set(last_move_cells(state))
    grid = state.grid()
    assert all(grid[r][c] == "#" for r, c in last)


def test_last_piece_follows_a_row_removal() -> None:
    """After an ATT drop that removes rows, the outline is where the piece's blocks fell to."""
    for seed in range(60):
        state = play_random("att", seed=seed, max_plies=200, width=4, height=8)
        while state.history:
            before = state.copy()
            move = before.undo()
            if "(" in before.san(move):
                break
            state.undo()
        if state.history:
            break
    else:
        pytest.fail("no random small-well game removed a row")
    cells = last_move_cells(state)
    grid = state.grid()
    assert 0 < len(cells) < 4  # some blocks went with the removed rows
    assert all(grid[r][c] == "#" for r, c in cells)


def test_no_highlight_at_the_start_and_when_disabled() -> None:
    """The initial position has nothing to outline; ``highlight_last=False`` turns it off."""
    start = load_game("att").new_state()
    assert elements(render_svg(start), "last") == []
    state = play_random("tetress", seed=1, max_plies=3)
    assert elements(render_svg(state, highlight_last=False), "last") == []
    assert len(elements(render_svg(state, highlight={(0, 0)}), "last")) == 1


def test_svg_escapes_text() -> None:
    """A title with markup characters stays well-formed XML."""
    state = load_game("tetress").new_state()
    svg = render_svg(state, title="<Alice & Bob>")
    assert ET.fromstring(svg).find(f"{SVG}title").text == "<Alice & Bob>"  # type: ignore[union-attr]
