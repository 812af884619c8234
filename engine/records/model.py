"""The value types of a game record: :class:`GameRecord` and its :class:`RecordedMove` list.

A record holds text only (moves in the game's short notation, tags as strings), so it can be
built, compared, stored and sent without the game's code; :mod:`engine.records.replay` turns it
back into positions and checks it against the rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from engine.records.search import SEARCH_KEYS, SearchInfo

#: The six move annotations, from worst to best.
ANNOTATIONS: tuple[str, ...] = ("??", "?", "?!", "!?", "!", "!!")

#: PGN's numeric annotation glyphs for the six annotations (``$1`` is ``!``...).
NAG_TO_ANNOTATION: Mapping[int, str] = MappingProxyType(
    {1: "!", 2: "?", 3: "!!", 4: "??", 5: "!?", 6: "?!"}
)

#: Results as written in the Result tag and at the end of the moves.
RESULTS: tuple[str, ...] = ("1-0", "0-1", "1/2-1/2", "*")

#: Suggested Termination values for verdicts the referee gives outside the rules of the game.
#: The tag is free text: any other word is accepted; only engine terminations are checked.
REFEREE_TERMINATIONS: tuple[str, ...] = (
    "time_forfeit",
    "illegal_move",
    "invalid_reply",
    "crash",
    "memory_limit",
    "disconnect",
    "resignation",
    "adjudication",
    "abandoned",
)

#: Keys of the extra ``key=value`` data a move comment may carry.
KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]*\Z")
#: Values of that data: no blanks, braces, backslashes or bars, so comments stay readable.
VALUE_PATTERN = re.compile(r"[^\s{}\\|]+\Z")

#: The four typed measurements of a move, with their unit suffix in the text form.
MEASURES: tuple[tuple[str, str], ...] = (
    ("think", "s"),
    ("clock", "s"),
    ("lag", "s"),
    ("mem", "MB"),
)
_MEASURE_KEYS = frozenset(key for key, _ in MEASURES)
#: Data keys with a typed home, never free ``extra`` data.
_TYPED_KEYS = _MEASURE_KEYS | frozenset(SEARCH_KEYS)


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """One ply: the move in short notation plus what was measured and said about it.

    ``think`` is the mover's thinking time, ``clock`` the time left on its clock afterwards,
    ``lag`` the transport latency (all in seconds); ``mem`` the mover's memory in megabytes.
    ``extra`` holds any further ``key=value`` data (e.g. ``("hash", "7f3a")``) in order;
    ``comment`` free text. Surrounding blanks of ``comment`` are dropped. ``search`` is what
    the mover said about its search (:class:`~engine.records.search.SearchInfo`), if anything.
    """

    san: str
    annotation: str | None = None
    think: float | None = None
    clock: float | None = None
    lag: float | None = None
    mem: float | None = None
    extra: tuple[tuple[str, str], ...] = ()
    comment: str = ""
    search: SearchInfo | None = None

    def __post_init__(self) -> None:
        if not self.san or self.san != self.san.strip() or "{" in self.san or "}" in self.san:
            raise ValueError(f"bad move text {self.san!r}")
        if self.annotation is not None and self.annotation not in ANNOTATIONS:
            raise ValueError(f"annotation must be one of {ANNOTATIONS}, got {self.annotation!r}")
        for key, _ in MEASURES:
            value = getattr(self, key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{key} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{key} must be finite, got {value!r}")
            object.__setattr__(self, key, float(value))
        extra = tuple((str(k), str(v)) for k, v in self.extra)
        for key, value in extra:
            if not KEY_PATTERN.match(key) or key in _TYPED_KEYS:
                raise ValueError(f"bad comment data key {key!r}")
            if not VALUE_PATTERN.match(value):
                raise ValueError(f"bad comment data value {value!r} for {key!r}")
        object.__setattr__(self, "extra", extra)
        object.__setattr__(self, "comment", self.comment.strip())
        if self.search is not None and self.search.empty:
            object.__setattr__(self, "search", None)

    @property
    def has_comment(self) -> bool:
        """Whether the move carries any data or free text (i.e. needs a ``{...}`` comment)."""
        return bool(self.comment or self.extra or self.search) or any(
            getattr(self, key) is not None for key, _ in MEASURES
        )


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A whole game: the tag pairs, the initial position and the moves.

    ``players`` is indexed by seat (the game's ``seat_names`` order); ``params`` are the
    game's parameters as given to :func:`engine.load_game`; ``setup`` is the initial position
    string when the game did not start from the standard position; ``result`` is ``1-0``,
    ``0-1``, ``1/2-1/2`` or ``*`` (seat 0 wins, seat 1 wins, draw, unfinished);
    ``termination`` an engine :class:`~engine.outcome.Termination` value or a referee verdict
    (see :data:`REFEREE_TERMINATIONS`), ``reason`` the sentence for people; ``extra_tags`` any
    other tags, in order; ``comment`` free text written before the first move.
    """

    game: str
    params: Mapping[str, int] = field(default_factory=dict)
    players: tuple[str, str] = ("?", "?")
    event: str = "?"
    site: str = "?"
    date: str = "????.??.??"
    round: str = "?"
    time_control: str | None = None
    setup: str | None = None
    result: str = "*"
    termination: str | None = None
    reason: str | None = None
    moves: tuple[RecordedMove, ...] = ()
    extra_tags: tuple[tuple[str, str], ...] = ()
    comment: str = ""

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"result must be one of {RESULTS}, got {self.result!r}")
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "moves", tuple(self.moves))
        object.__setattr__(self, "extra_tags", tuple((k, v) for k, v in self.extra_tags))
        object.__setattr__(self, "comment", self.comment.strip())
        if len(self.players) != 2:
            raise ValueError("a record has exactly two players")

    @property
    def plies(self) -> int:
        """How many moves the record holds."""
        return len(self.moves)

    def tag(self, name: str) -> str | None:
        """The value of the extra tag ``name``, or ``None``."""
        for key, value in self.extra_tags:
            if key == name:
                return value
        return None
