"""Writer and readers round-trip: random games of every game, random comments and annotations."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import game_names, load_game
from engine.records import (
    ANNOTATIONS,
    REFEREE_TERMINATIONS,
    GameRecord,
    RecordBuilder,
    read_json,
    read_record,
    record_from_json,
    record_to_json,
    write_json,
    write_record,
)
from engine.records.search import SEARCH_KEYS

# Every registered game with its defaults, plus a small ATT well, where row removals (and so
# clearance marks) are frequent.
GAMES: list[tuple[str, dict[str, int]]] = [(name, {}) for name in game_names()] + [
    ("att", {"width": 4, "height": 8}),
]

numbers = st.one_of(
    st.none(),
    st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.floats(min_value=1e-9, max_value=1e-3),
)
free_text = st.text(max_size=30)
tag_text = st.text(max_size=20)
extra_data = st.lists(
    st.tuples(
        # Keys with a typed home of their own (measures, the search) are not free data.
        st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
            lambda k: k not in ("think", "clock", "lag", "mem", *SEARCH_KEYS)
        ),
        st.text(
            alphabet=st.characters(
                blacklist_categories=("Cs", "Z", "Cc"), blacklist_characters="{}\\|"
            ),
            min_size=1,
            max_size=8,
        ),
    ),
    max_size=2,
    unique_by=lambda pair: pair[0],
)
details = st.fixed_dictionaries(
    {},
    optional={
        "annotation": st.sampled_from(ANNOTATIONS),
        "think": numbers,
        "clock": numbers,
        "lag": numbers,
        "mem": numbers,
        "extra": extra_data,
        "comment": free_text,
    },
)
extra_tags = st.lists(
    st.tuples(st.sampled_from(["Annotator", "WhiteElo", "Mode", "X_1"]), tag_text),
    max_size=3,
    unique_by=lambda pair: pair[0],
)


def build(
    game_index: int, seed: int, plies: int, move_details: list[dict[str, Any]], meta: dict[str, Any]
) -> GameRecord:
    name, params = GAMES[game_index]
    game = load_game(name, **params)
    builder = RecordBuilder(
        game,
        players=meta["players"],
        event=meta["event"],
        site=meta["site"],
        extra_tags=meta["extra_tags"],
        comment=meta["comment"],
    )
    rng = random.Random(seed)
    state = builder.state
    for index in range(plies):
        if state.is_over():
            break
        move = rng.choice(list(state.legal_moves))
        builder.add(move, **move_details[index % len(move_details)])
    verdict = meta["verdict"]
    if state.is_over() or verdict is None:
        return builder.finish()
    return builder.finish(result=verdict[0], termination=verdict[1], reason=meta["reason"])


records = st.builds(
    build,
    st.integers(0, len(GAMES) - 1),
    st.integers(0, 2**32),
    st.integers(0, 40),
    st.lists(details, min_size=1, max_size=4),
    st.fixed_dictionaries(
        {
            "players": st.tuples(tag_text, tag_text),
            "event": tag_text,
            "site": tag_text,
            "extra_tags": extra_tags,
            "comment": free_text,
            "verdict": st.one_of(
                st.none(),
                st.tuples(st.sampled_from(["1-0", "0-1"]), st.sampled_from(REFEREE_TERMINATIONS)),
            ),
            "reason": st.one_of(st.none(), tag_text),
        }
    ),
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(records)
def test_text_round_trip(record: GameRecord) -> None:
    """Writing a record as text and reading it back gives the same record."""
    assert read_record(write_record(record)) == record


@SETTINGS
@given(records)
def test_json_round_trip_and_equivalence(record: GameRecord) -> None:
    """The JSON form reads back equal, and text and JSON carry the same tags and moves."""
    assert read_json(write_json(record)) == record
    from_text = read_record(write_record(record))
    assert record_to_json(from_text) == record_to_json(record)
    assert record_from_json(record_to_json(record)) == from_text


def test_both_games_are_covered() -> None:
    """The round trips above run over Tetress and ATT at least."""
    assert {"tetress", "att"} <= {name for name, _ in GAMES}


def test_text_round_trip_of_hand_picked_awkward_strings() -> None:
    """Strings hypothesis might miss: lone bars, data-like words, braces, quotes, line breaks."""
    awkward = ["|", "| x", "a=b", "a=b c", "}", "{", "\\", '"', "\n[Game]", "\r\n", "x\\}y"]
    game = load_game("tetress")
    for text in awkward:
        builder = RecordBuilder(game, players=(text, text), event=text, comment=text)
        state = builder.state
        builder.add(next(iter(state.legal_moves)), comment=text, extra={"k": "v"})
        builder.add(next(iter(state.legal_moves)), comment=text)
        record = builder.finish(result="1-0", termination="crash", reason=text)
        assert read_record(write_record(record)) == record, text
        assert read_json(write_json(record)) == record, text
