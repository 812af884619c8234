"""Game records for every registered game: value types, text (PGN-like) and JSON forms, replay.

Pure: strings in, strings out (the CLI reads and writes files), but for the openings books
(:mod:`engine.records.openings`), which read and write their own files. Typical use::

    from engine.records import RecordBuilder, write_record, read_record, replay
    builder = RecordBuilder(game, players=("alice", "bob"), event="Ladder")
    builder.add(move, think=0.12, clock=59.8)
    text = write_record(builder.finish())
    state = replay(read_record(text), ply=10)

See ``docs/records.md`` for the format.
"""

from engine.records.jsonform import (
    read_json,
    read_json_lines,
    record_from_json,
    record_to_json,
    write_json,
    write_json_lines,
)
from engine.records.model import (
    ANNOTATIONS,
    REFEREE_TERMINATIONS,
    RESULTS,
    GameRecord,
    RecordedMove,
)
from engine.records.pgn import iter_records, read_record, read_records, write_record, write_records
from engine.records.replay import (
    RecordBuilder,
    apply_recorded,
    initial_state,
    positions,
    record_from_state,
    record_game,
    replay,
    verify_record,
)
from engine.records.search import SearchInfo

__all__ = [
    "ANNOTATIONS",
    "REFEREE_TERMINATIONS",
    "RESULTS",
    "GameRecord",
    "RecordBuilder",
    "RecordedMove",
    "SearchInfo",
    "apply_recorded",
    "initial_state",
    "iter_records",
    "positions",
    "read_json",
    "read_json_lines",
    "read_record",
    "read_records",
    "record_from_json",
    "record_from_state",
    "record_game",
    "record_to_json",
    "replay",
    "verify_record",
    "write_json",
    "write_json_lines",
    "write_record",
    "write_records",
]
