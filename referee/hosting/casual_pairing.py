"""Who plays whom next in casual play: a sans-I/O policy the matchmaker asks (no sessions, no
clock of its own: every call is given the time).

- The session that has waited longest (among those with a possible opponent) is paired first,
  with the opponent it met least recently (never met first), then the one waiting longest: no
  immediate rematch while another opponent waits.
- A bot that lost its last casual game by failing to answer (time-out, disconnect) sits out a
  cooling-off period before it is paired again, twice as long after each repeat; its wait
  starts over when the period ends, so it never jumps the queue. Its conduct is remembered by
  its stored player (the token's owner, whatever bot name it gives) where it has one, so
  neither reconnecting nor a fresh bot name resets it.
- A player whose casual games end in its forfeit twice or more in a row, or
  :data:`FEEDING_FORFEITS` times among its last :data:`CONDUCT_WINDOW` games, *feeds* wins:
  every rated forfeit of those games is voided (:meth:`CasualPairing.forfeit`), so neither
  opening a fresh bot name per game nor a clean game between forfeits moves a rating by
  losing on purpose; an honest bot that crashes now and then keeps its games rated.
- Such a bot is *on probation* until it finishes a casual game without that fault; a game it
  then loses the same way is not rated (see docs/ratings.md).
- A bot with no clean casual game on record (new, or on probation) must make its first move
  within a short window (:meth:`CasualPairing.first_move_window`), or the game is aborted as a
  no-show: an idle session holds its opponent for that window, not for a whole clock.

The bound this gives (checked by a property test): a waiting session that has a possible
opponent free sees no more games start without it than there were sessions waiting ahead of it
when its wait began.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "AFTER_GAME_S",
    "CONDUCT_WINDOW",
    "COOLING_BASE_S",
    "COOLING_MAX_S",
    "FEEDING_FORFEITS",
    "FIRST_MOVE_MAX_S",
    "FIRST_MOVE_S",
    "CasualPairing",
    "CoolingOff",
    "Pairing",
    "Seeker",
]

#: The first cooling-off period; each repeat doubles it, up to COOLING_MAX_S.
COOLING_BASE_S = 30.0
COOLING_MAX_S = 3600.0
#: The first-move window of a bot with no clean casual game on record; each failure in a row
#: doubles it, up to FIRST_MOVE_MAX_S (its clock still applies as well).
FIRST_MOVE_S = 2.0
FIRST_MOVE_MAX_S = 64.0
#: After each game a session rests this long before casual pairing gives it another: a bot
#: that leaves right after its game (its stream closed on the GameOver, with no Goodbye) is
#: seen leaving first, instead of being handed a game it can only lose by disconnect.
AFTER_GAME_S = 1.0
#: A player's last games (that it answered in or forfeited) weighed for feeding, and the
#: forfeits among them that make it a feeder: one forfeit in every other game feeds, a crash
#: every few games does not.
CONDUCT_WINDOW = 10
FEEDING_FORFEITS = 3
#: Conduct records kept at most (the oldest clean ones go first).
MAX_RECORDS = 100_000


@dataclass(frozen=True, slots=True)
class Seeker:
    """A free session as casual pairing sees it."""

    key: str
    #: The channel it plays in (``""``: the open pool); pools never mix.
    pool: str = ""
    #: Its token's owner: two sessions of one owner never meet, so no player farms rating
    #: from copies of their own bot (``None``: an open session).
    owner: str | None = None
    #: The games it may be paired for, in the server's order of preference.
    games: tuple[str, ...] = ()
    #: Whose conduct record it carries (the stored player, else its own key).
    conduct: str = ""

    @property
    def record(self) -> str:
        return self.conduct or self.key

    def can_meet(self, other: Seeker) -> str | None:
        """The first game both may play, or ``None`` when they cannot meet."""
        if other.key == self.key or other.pool != self.pool:
            return None
        if self.owner is not None and self.owner == other.owner:
            return None
        for game in self.games:
            if game in other.games:
                return game
        return None


@dataclass(frozen=True, slots=True)
class Pairing:
    first: str
    second: str
    game: str


@dataclass(frozen=True, slots=True)
class CoolingOff:
    """A bot told to sit out: for ``seconds``, after its ``strikes``-th failure in a row."""

    seconds: float
    until: float
    strikes: int


@dataclass(slots=True)
class _Conduct:
    strikes: int = 0
    until: float = 0.0
    #: It has played a casual game cleanly (answered, never failed to).
    proven: bool = False
    #: Its forfeits in a row (any fault).
    forfeits: int = 0
    #: Its last CONDUCT_WINDOW games: whether it forfeited each, and the id of a rated
    #: forfeit not voided yet (else ``None``).
    recent: deque[tuple[bool, str | None]] = field(
        default_factory=lambda: deque(maxlen=CONDUCT_WINDOW)
    )


class CasualPairing:
    """The casual pairing policy; the matchmaker reports games started and ended."""

    def __init__(
        self,
        base_s: float = COOLING_BASE_S,
        max_s: float = COOLING_MAX_S,
        rest_s: float = AFTER_GAME_S,
    ) -> None:
        if base_s < 0 or max_s < base_s or rest_s < 0:
            raise ValueError("periods must satisfy 0 <= base <= max and rest >= 0")
        self.base_s = base_s
        self.max_s = max_s
        self.rest_s = rest_s
        #: Session key -> when its rest after its last game ends.
        self._rest_until: dict[str, float] = {}
        #: Session key -> when its current wait began, and the wait's serial number (which
        #: orders waits that began at the same moment).
        self._since: dict[str, tuple[float, int]] = {}
        self._waits = 0
        #: Pair of session keys -> the serial number of the last game they played.
        self._met: dict[frozenset[str], int] = {}
        self._serial = 0
        self._conduct: OrderedDict[str, _Conduct] = OrderedDict()

    # -- what the matchmaker reports ---------------------------------------------------------

    def started(self, pairing: Pairing) -> None:
        """A game between the two began: their waits are over."""
        self._serial += 1
        self._met[frozenset((pairing.first, pairing.second))] = self._serial
        self._since.pop(pairing.first, None)
        self._since.pop(pairing.second, None)

    def finished(self, key: str, now: float) -> None:
        """A game of the session ended (any game): it rests :attr:`rest_s` before the next."""
        self._rest_until[key] = now + self.rest_s

    def ended(
        self, seeker: Seeker, failed: bool, now: float, answered: bool = True
    ) -> CoolingOff | None:
        """A casual game of ``seeker`` ended; ``failed``: it lost by not answering;
        ``answered``: it made a move in it. Returns the cooling-off it now sits out, if any."""
        if not failed and not answered:
            return None  # won before its first move (the opponent failed): proves nothing
        conduct = self._record(seeker)
        if not failed:
            conduct.strikes, conduct.until, conduct.proven = 0, 0.0, True
            return None  # a game played cleanly clears the record
        conduct.strikes += 1
        conduct.proven = False
        seconds = min(self.max_s, self.base_s * 2.0 ** (conduct.strikes - 1))
        conduct.until = now + seconds
        return CoolingOff(seconds, conduct.until, conduct.strikes)

    def forfeit(
        self, seeker: Seeker, game_id: str, forfeited: bool, rated: bool, answered: bool = True
    ) -> list[str]:
        """A casual game of ``seeker`` ended; ``forfeited``: it lost by a fault (any: time, a
        drop, an illegal move, a crash); ``rated``: the game is stored rated; ``answered``: it
        made a move. Returns the rated games to void once it feeds (two forfeits in a row, or
        :data:`FEEDING_FORFEITS` among its last :data:`CONDUCT_WINDOW` games): its rated
        forfeits among those games not voided yet, this one included."""
        if not forfeited:
            if not answered:
                return []  # won before its first move: proves nothing
            conduct = self._conduct.get(seeker.record)
            if conduct is not None:
                conduct.forfeits = 0
                conduct.recent.append((False, None))
            return []
        conduct = self._record(seeker)
        conduct.forfeits += 1
        conduct.recent.append((True, game_id if rated else None))
        lost = sum(f for f, _ in conduct.recent)
        if conduct.forfeits < 2 and lost < FEEDING_FORFEITS:
            return []
        voided = [g for _, g in conduct.recent if g is not None]
        conduct.recent = deque(((f, None) for f, _ in conduct.recent), maxlen=CONDUCT_WINDOW)
        return voided

    def _record(self, seeker: Seeker) -> _Conduct:
        """Its conduct record, made the most recent (the oldest go first past the cap)."""
        conduct = self._conduct.pop(seeker.record, None) or _Conduct()
        self._conduct[seeker.record] = conduct
        while len(self._conduct) > MAX_RECORDS:
            self._conduct.popitem(last=False)
        return conduct

    def left(self, key: str) -> None:
        """The session is gone: forget its wait and its meetings (its conduct stays)."""
        self._since.pop(key, None)
        self._rest_until.pop(key, None)
        for pair in [p for p in self._met if key in p]:
            del self._met[pair]

    # -- questions ------------------------------------------------------------------------------

    def on_probation(self, seeker: Seeker) -> bool:
        """Whether its last casual game ended in its failure to answer."""
        conduct = self._conduct.get(seeker.record)
        return conduct is not None and conduct.strikes > 0

    def first_move_window(self, seeker: Seeker) -> float | None:
        """How soon it must make its first move in its next casual game (``None``: no window,
        it has a clean casual game on record)."""
        conduct = self._conduct.get(seeker.record)
        if conduct is not None and conduct.proven:
            return None
        strikes = 0 if conduct is None else conduct.strikes
        return min(FIRST_MOVE_MAX_S, FIRST_MOVE_S * 2.0**strikes)

    def cooling_until(self, seeker: Seeker) -> float:
        conduct = self._conduct.get(seeker.record)
        return 0.0 if conduct is None else conduct.until

    def next_release(self, seekers: Sequence[Seeker], now: float) -> float | None:
        """When the first of ``seekers`` still cooling off or resting may play again."""
        ends = [u for s in seekers if (u := self.free_from(s)) > now]
        return min(ends, default=None)

    def free_from(self, seeker: Seeker) -> float:
        """When it may be paired again: after its cooling-off and its rest after a game."""
        return max(self.cooling_until(seeker), self._rest_until.get(seeker.key, 0.0))

    def place(self, seeker: Seeker) -> tuple[float, int] | None:
        """Its place in the queue: when its wait began (or its cooling-off or rest ended, if
        later), and the wait's serial number; ``None`` when it is not waiting."""
        since = self._since.get(seeker.key)
        if since is None:
            return None
        return (max(since[0], self.free_from(seeker)), since[1])

    def next_pair(self, seekers: Sequence[Seeker], now: float) -> Pairing | None:
        """The next game to start among ``seekers`` (the free sessions), or ``None``."""
        ready: list[tuple[tuple[float, int], Seeker]] = []
        for seeker in seekers:
            if seeker.key not in self._since:
                self._waits += 1
                self._since[seeker.key] = (now, self._waits)
            place = self.place(seeker)
            if place is not None and place[0] <= now:
                ready.append((place, seeker))
        ready.sort(key=lambda item: item[0])
        for _, chooser in ready:
            best: tuple[int, tuple[float, int]] | None = None
            choice: Pairing | None = None
            for place, other in ready:
                game = chooser.can_meet(other)
                if game is None:
                    continue
                rank = (self._met.get(frozenset((chooser.key, other.key)), -1), place)
                if best is None or rank < best:
                    best, choice = rank, Pairing(chooser.key, other.key, game)
            if choice is not None:
                return choice
        return None
