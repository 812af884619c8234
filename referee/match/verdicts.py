"""The verdict vocabulary and sentences of a game (defined in :mod:`engine.adjudication`, where
the SDK's local referee shares them; named here so the match room holds everything about a game)."""

from engine.adjudication.verdicts import (
    Ending,
    GameEnd,
    Verdict,
    aborted,
    backstop_sentence,
    bot_failed_sentence,
    disconnect_sentence,
    fault,
    illegal_sentence,
    memory_sentence,
    not_a_move_sentence,
    parse_ending,
    rules_end,
    time_sentence,
    unreadable_sentence,
)

__all__ = [
    "Ending",
    "GameEnd",
    "Verdict",
    "aborted",
    "backstop_sentence",
    "bot_failed_sentence",
    "disconnect_sentence",
    "fault",
    "illegal_sentence",
    "memory_sentence",
    "not_a_move_sentence",
    "parse_ending",
    "rules_end",
    "time_sentence",
    "unreadable_sentence",
]
