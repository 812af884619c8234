"""A bot's think record (``search``) in both record forms: written, read back the same, and
refused with a clear problem when malformed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import load_game
from engine.errors import RecordError
from engine.records import (
    RecordBuilder,
    SearchInfo,
    read_json,
    read_record,
    write_json,
    write_record,
)


def _record(search: SearchInfo, comment: str = "") -> object:
    game = load_game("tetress")
    builder = RecordBuilder(game, players=("a", "b"))
    builder.add(next(iter(builder.state.legal_moves)), think=0.5, search=search, comment=comment)
    return builder.finish()


TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)


@settings(deadline=None, max_examples=60)
@given(
    depth=st.none() | st.integers(0, 1000),
    nodes=st.none() | st.integers(0, 2**63 - 1),
    score=st.none() | st.floats(-1e9, 1e9, allow_nan=False),
    pv=st.lists(TEXT.filter(lambda t: t.strip() != ""), max_size=4),
    text=TEXT,
    comment=TEXT,
)
def test_any_think_record_reads_back_the_same_from_text_and_json(
    depth: int | None,
    nodes: int | None,
    score: float | None,
    pv: list[str],
    text: str,
    comment: str,
) -> None:
    """Whatever a bot says (braces, bars, percent signs, blanks in its PV and text), both
    record forms read back exactly what was written."""
    record = _record(SearchInfo(depth, nodes, score, tuple(pv), text), comment)
    assert read_record(write_record(record)) == record  # type: ignore[arg-type]
    assert read_json(write_json(record)) == record  # type: ignore[arg-type]


def test_the_text_form_keeps_search_as_comment_data() -> None:
    """The PGN-like comment holds the search as data words before the free text."""
    record = _record(SearchInfo(6, 5120, 35, ("PLACE(0-0, 0-1, 1-0, 1-1)",), "deep"), "hi")
    text = write_record(record)  # type: ignore[arg-type]
    assert "{think=0.5s depth=6 nodes=5120 score=35 pv=PLACE(0-0,%200-1,%201-0,%201-1) " in text
    assert "text=deep | hi}" in text
    moves = read_record(text).moves
    assert moves[0].search == SearchInfo(6, 5120, 35.0, ("PLACE(0-0, 0-1, 1-0, 1-1)",), "deep")
    assert moves[0].comment == "hi"


def test_bad_search_data_is_a_record_problem() -> None:
    """A depth that is not a whole number, or a JSON search that is not an object, is
    reported with where it is."""
    text = write_record(_record(SearchInfo(depth=3)))  # type: ignore[arg-type]
    with pytest.raises(RecordError, match="bad depth value 'x'"):
        read_record(text.replace("depth=3", "depth=x"))
    data = write_json(_record(SearchInfo(depth=3))).replace('{"depth": 3}', '"deep"')  # type: ignore[arg-type]
    with pytest.raises(RecordError, match=r"moves\[0\]\.search"):
        read_json(data)
