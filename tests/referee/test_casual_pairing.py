"""The casual pairing policy over random arrivals, departures and results: nobody is passed
over more often than there were sessions waiting ahead of it, no immediate rematch while
another opponent waits, and bots that fail to answer cool off for longer each time."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.adjudication.verdicts import GameEnd, Verdict, aborted, fault
from referee.hosting.casual_conduct import seat_conduct, settle, unrated
from referee.hosting.casual_pairing import CasualPairing, Pairing, Seeker
from referee.match.clock import TimeControl
from referee.match.report import GameReport, MoveLog, SeatReport

GAMES = (("tetress",), ("att",), ("tetress", "att"))


@dataclass
class World:
    """Sessions, the games they play, and what the invariants need to remember."""

    policy: CasualPairing = field(default_factory=lambda: CasualPairing(5.0, 40.0))
    now: float = 0.0
    arrived: int = 0
    seekers: dict[str, Seeker] = field(default_factory=dict)
    free: list[str] = field(default_factory=list)
    games: list[tuple[str, str]] = field(default_factory=list)
    last_opponent: dict[str, str] = field(default_factory=dict)
    #: Per ready session: the sessions ahead of it when it became ready, and times passed over.
    ahead: dict[str, int] = field(default_factory=dict)
    passed: dict[str, int] = field(default_factory=dict)
    started: int = 0

    def arrive(self, pool: str, owner: str | None, games: tuple[str, ...]) -> None:
        self.arrived += 1
        key = f"s{self.arrived}"
        self.seekers[key] = Seeker(key, pool, owner, games, conduct=f"{owner}/{key}")
        self.free.append(key)

    def leave(self, index: int) -> None:
        if not self.seekers:
            return
        key = sorted(self.seekers)[index % len(self.seekers)]
        for game in [g for g in self.games if key in g]:
            self.games.remove(game)
            other = game[0] if game[1] == key else game[1]
            self.policy.ended(self.seekers[other], False, self.now)
            self._freed(other)
        if key in self.free:
            self.free.remove(key)
        del self.seekers[key]
        self.policy.left(key)
        self.ahead.pop(key, None)
        self.passed.pop(key, None)

    def end(self, index: int, failing_seat: int | None) -> None:
        if not self.games:
            return
        game = self.games.pop(index % len(self.games))
        for seat, key in enumerate(game):
            cooling = self.policy.ended(self.seekers[key], failing_seat == seat, self.now)
            if failing_seat == seat:
                assert cooling is not None and cooling.until > self.now
            self._freed(key)

    def _freed(self, key: str) -> None:
        self.free.append(key)
        self.ahead.pop(key, None)
        self.passed.pop(key, None)

    def ready(self, key: str) -> bool:
        place = self.policy.place(self.seekers[key])
        return place is not None and place[0] <= self.now

    def has_opponent(self, key: str) -> bool:
        me = self.seekers[key]
        return any(me.can_meet(self.seekers[o]) and self.ready(o) for o in self.free if o != key)

    def pair_all(self) -> None:
        while True:
            # Offered as the lobby lists them: in order of arrival.
            lobby = sorted(self.free, key=lambda k: int(k[1:]))
            pairing = self.policy.next_pair([self.seekers[k] for k in lobby], self.now)
            self._note_ready()
            if pairing is None:
                self._check_nothing_left()
                return
            self._check(pairing)
            self.policy.started(pairing)
            self.started += 1
            for key in (pairing.first, pairing.second):
                self.free.remove(key)
                self.ahead.pop(key, None)
                self.passed.pop(key, None)
            self.last_opponent[pairing.first] = pairing.second
            self.last_opponent[pairing.second] = pairing.first
            self.games.append((pairing.first, pairing.second))

    def _note_ready(self) -> None:
        for key in self.free:
            if key in self.ahead or not self.ready(key):
                continue
            place = self.policy.place(self.seekers[key])
            assert place is not None
            self.ahead[key] = sum(
                1 for o in self.free if (p := self.policy.place(self.seekers[o])) and p < place
            )
            self.passed[key] = 0

    def _check(self, pairing: Pairing) -> None:
        first, second = self.seekers[pairing.first], self.seekers[pairing.second]
        assert first.can_meet(second) == pairing.game
        assert self.ready(first.key) and self.ready(second.key)
        for key in self.free:
            if key in (first.key, second.key) or not self.ready(key):
                continue
            if not self.has_opponent(key):
                continue
            self.passed[key] += 1
            assert self.passed[key] <= self.ahead[key], (key, self.passed, self.ahead)
        if self.last_opponent.get(first.key) == second.key == self._last(second.key, first.key):
            others = [
                k
                for k in self.free
                if k not in (first.key, second.key)
                and self.ready(k)
                and first.can_meet(self.seekers[k])
                and second.can_meet(self.seekers[k])
            ]
            assert not others, f"rematch {pairing} while {others} waited"

    def _last(self, key: str, expected: str) -> str | None:
        return key if self.last_opponent.get(key) == expected else None

    def _check_nothing_left(self) -> None:
        """No two ready sessions that could meet are left waiting."""
        ready = [k for k in self.free if self.ready(k)]
        for i, a in enumerate(ready):
            for b in ready[i + 1 :]:
                assert self.seekers[a].can_meet(self.seekers[b]) is None, (a, b)


EVENTS = st.one_of(
    st.tuples(
        st.just("arrive"),
        st.sampled_from(["", "", "lab"]),
        st.sampled_from([None, "ann", "bob", "cid", "dan"]),
        st.sampled_from(GAMES),
    ),
    st.tuples(st.just("leave"), st.integers(0, 50)),
    st.tuples(st.just("end"), st.integers(0, 50), st.sampled_from([None, None, None, 0, 1])),
    st.tuples(st.just("tick"), st.floats(0.0, 30.0)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=120))
def test_nobody_waits_longer_than_the_queue_ahead_of_it(events: list[tuple]) -> None:  # type: ignore[type-arg]
    """Over random arrivals, departures, results and time: every game pairs two sessions that
    may meet; a ready session with a possible opponent is passed over at most as many times
    as sessions waited ahead of it; no mutual rematch while a third could play both; no two
    ready sessions that could meet are left waiting."""
    world = World()
    for event in events:
        if event[0] == "arrive":
            world.arrive(event[1], event[2], event[3])
        elif event[0] == "leave":
            world.leave(event[1])
        elif event[0] == "end":
            world.end(event[1], event[2])
        else:
            world.now += event[1]
        world.pair_all()


def test_three_bots_take_turns() -> None:
    """Three bots in one pool: whenever a game ends, the one who sat out plays next (the issue's
    starved third bot), and nobody meets the same opponent twice running."""
    world = World()
    for _ in range(3):
        world.arrive("", None, ("tetress",))
    world.pair_all()
    played = {k: 0 for k in world.seekers}
    for _ in range(30):
        a, b = world.games[0]
        played[a] += 1
        played[b] += 1
        world.end(0, None)
        world.pair_all()
    assert max(played.values()) - min(played.values()) <= 1, played


def test_cooling_off_doubles_and_a_clean_game_clears_it() -> None:
    """Each failure in a row doubles the period (up to the cap); a clean game clears the record,
    which follows the bot's identity, not its session."""
    policy = CasualPairing(10.0, 35.0)
    idle = Seeker("a", conduct="ann/idle")
    periods = [policy.ended(idle, True, 0.0) for _ in range(4)]
    assert [p.seconds for p in periods if p] == [10.0, 20.0, 35.0, 35.0]
    again = Seeker("b", conduct="ann/idle")  # the same bot on a new session
    assert policy.on_probation(again) and policy.cooling_until(again) == 35.0
    assert policy.ended(again, False, 50.0) is None
    assert not policy.on_probation(idle)


def test_a_bot_cooling_off_is_not_paired_until_its_period_ends() -> None:
    """A bot cooling off is left out while another waits, and rejoins behind it afterwards."""
    policy = CasualPairing(10.0, 60.0)
    idle, honest, other = (
        Seeker("i", games=("t",)),
        Seeker("h", games=("t",)),
        Seeker("o", games=("t",)),
    )
    policy.ended(idle, True, 0.0)
    assert policy.next_pair([idle, honest], 1.0) is None
    assert policy.next_release([idle, honest], 1.0) == 10.0
    assert policy.next_pair([idle, honest], 10.0) == Pairing("h", "i", "t")
    policy.started(Pairing("h", "i", "t"))
    assert policy.next_pair([idle, other, honest], 11.0) == Pairing("i", "o", "t")


def _report(end: GameEnd, moved: tuple[int, ...] = ()) -> GameReport:
    report = GameReport(
        "g1", "tetress", {}, ("RED", "BLUE"), [SeatReport("a", ""), SeatReport("b", "")],
        TimeControl(), 0, "", "",
    )  # fmt: skip
    report.moves = [MoveLog(i, seat, "x", 0.0, 0.0, 0, None) for i, seat in enumerate(moved)]
    report.end = end
    return report


def test_a_no_show_is_aborted_told_and_cools_off_while_its_opponent_is_not() -> None:
    """A no-show (aborted game) sends only the bot that did not move to cool off, with a notice
    saying so; its opponent, with no window of its own, is left alone."""
    policy = CasualPairing(30.0, 600.0)
    honest, idle = Seeker("h", conduct="h"), Seeker("i", conduct="i")
    policy.ended(honest, False, 0.0)  # a clean game on record: no window any more
    seats = seat_conduct(policy, honest, idle)
    assert seats.windows == (None, 2.0)
    report = _report(aborted("BLUE did not make its first move"), moved=(0,))
    notices = settle(policy, seats, report, 1, 5.0).notices
    assert notices == [
        (1, "cooling off: you did not make your first move within 2 s; "
         "casual pairing resumes in 30 s")
    ]  # fmt: skip
    assert not unrated(report) and policy.cooling_until(idle) == 35.0
    assert policy.cooling_until(honest) == 0.0


def test_time_losses_without_a_move_or_on_probation_are_not_rated() -> None:
    """A loss on time by a bot that never moved, or by one already on probation, is stored
    unrated; a first time-out after real play is rated."""
    policy = CasualPairing()
    a, b = Seeker("a", conduct="a"), Seeker("b", conduct="b")
    played = _report(fault(Verdict.TIME, 1, "BLUE exceeded its time"), moved=(0, 1, 0))
    settle(policy, seat_conduct(policy, a, b), played, None, 0.0)
    assert not unrated(played) and policy.on_probation(b)
    again = _report(fault(Verdict.TIME, 1, "BLUE exceeded its time"), moved=(0, 1, 0))
    settle(policy, seat_conduct(policy, a, b), again, None, 100.0)
    assert unrated(again) and "on probation" in again.labels["unrated"]
    c = Seeker("c", conduct="c")
    idle = _report(fault(Verdict.TIME, 1, "BLUE exceeded its time"), moved=(0,))
    settle(policy, seat_conduct(policy, a, c), idle, None, 0.0)
    assert unrated(idle) and "without making a move" in idle.labels["unrated"]


def test_a_session_rests_after_each_game_before_it_is_paired_again() -> None:
    """After a game both sessions rest AFTER_GAME_S (a bot leaving right after its game is
    seen leaving first); the matchmaker is told when the rest ends, and then they meet."""
    from referee.hosting.casual_pairing import AFTER_GAME_S

    policy = CasualPairing()
    a, b = Seeker("a", games=("tetress",)), Seeker("b", games=("tetress",))
    first = policy.next_pair([a, b], 0.0)
    assert first is not None
    policy.started(first)
    for key in ("a", "b"):
        policy.finished(key, 10.0)
    assert policy.next_pair([a, b], 10.0) is None
    assert policy.next_pair([a, b], 10.0 + AFTER_GAME_S / 2) is None
    assert policy.next_release([a, b], 10.0) == 10.0 + AFTER_GAME_S
    assert policy.next_pair([a, b], 10.0 + AFTER_GAME_S) is not None
    assert 0 < AFTER_GAME_S <= 2.0  # long enough for a round trip, short beside a game


def test_a_player_feeding_forfeits_under_fresh_bot_names_has_them_all_voided() -> None:
    """One player's sessions under a fresh bot name each (one record: the player's) lose on
    time after a move, game after game: the first stays rated only until the second, which
    voids it and is itself unrated, and so on; a clean game between does not clear the
    record (the forfeits are still among its last games)."""
    policy = CasualPairing(0.0, 0.0)
    honest = Seeker("h", conduct="player:bob")
    feeders = [Seeker(f"s{i}", conduct="player:mallory") for i in range(4)]
    voided: list[str] = []
    reports = []
    for i, feeder in enumerate(feeders[:3]):
        report = _report(fault(Verdict.TIME, 1, "BLUE exceeded its time"), moved=(0, 1))
        report.game_id = f"g{i}"
        voided += settle(policy, seat_conduct(policy, honest, feeder), report, None, 0.0).voided
        reports.append(report)
    assert not unrated(reports[0]) and voided == ["g0"]
    assert unrated(reports[1]) and unrated(reports[2])
    clean = _report(fault(Verdict.TIME, 0, "RED exceeded its time"), moved=(0, 1))
    settle(policy, seat_conduct(policy, honest, feeders[3]), clean, None, 0.0)
    illegal = _report(fault(Verdict.ILLEGAL_MOVE, 1, "BLUE played an illegal move"), moved=(0, 1))
    illegal.game_id = "g9"
    assert settle(policy, seat_conduct(policy, honest, feeders[0]), illegal, None, 0.0).voided == []
    assert unrated(illegal)


def _game(
    policy: CasualPairing, player: Seeker, game_id: str, *, forfeit: bool
) -> tuple[GameReport, list[str]]:
    """One casual game of ``player`` (seat 1, after moves) against a fresh honest opponent,
    ended by ``player``'s crash (a forfeit) or by the opponent's loss on time; the report and
    the games it voids."""
    loser = 1 if forfeit else 0
    ending = Verdict.RUNTIME_ERROR if forfeit else Verdict.TIME
    report = _report(fault(ending, loser, "a seat lost"), moved=(0, 1, 0, 1))
    report.game_id = game_id
    opponent = Seeker(f"o-{game_id}", conduct=f"player:o-{game_id}")
    seats = seat_conduct(policy, opponent, player)
    return report, settle(policy, seats, report, None, 0.0).voided


def test_a_player_alternating_clean_games_and_forfeits_feeds_and_is_voided() -> None:
    """Forfeit, clean, forfeit, clean, forfeit: the third forfeit among the player's last
    games makes it a feeder; the earlier rated forfeits are voided, the third is unrated,
    and so is every further forfeit while they stay in the window."""
    policy = CasualPairing(0.0, 0.0)
    alt = Seeker("s", conduct="player:mallory")
    games = [_game(policy, alt, f"g{i}", forfeit=i % 2 == 0) for i in range(7)]
    assert [unrated(g) for g, _ in games] == [False] * 4 + [True, False, True]
    assert [voided for _, voided in games] == [[], [], [], [], ["g0", "g2"], [], []]
    assert "forfeits casual games again and again" in games[4][0].labels["unrated"]


def test_an_honest_bot_that_crashes_now_and_then_keeps_its_games_rated() -> None:
    """A crash every fifth game (two among any CONDUCT_WINDOW games) feeds nothing: every
    game stays rated and none is voided."""
    from referee.hosting.casual_pairing import CONDUCT_WINDOW, FEEDING_FORFEITS

    assert CONDUCT_WINDOW // 5 < FEEDING_FORFEITS  # two crashes in any window at most
    policy = CasualPairing(0.0, 0.0)
    honest = Seeker("s", conduct="player:alice")
    games = [_game(policy, honest, f"g{i}", forfeit=i % 5 == 4) for i in range(40)]
    assert not any(unrated(g) for g, _ in games)
    assert all(voided == [] for _, voided in games)


def test_an_illegal_move_forfeit_run_is_voided_too() -> None:
    """Losing on purpose by illegal moves (no cooling-off: the bot answered) feeds no rating
    either: the second forfeit in a row voids the first and is unrated."""
    policy = CasualPairing()
    honest, feeder = Seeker("h", conduct="player:bob"), Seeker("f", conduct="player:eve")
    first = _report(fault(Verdict.ILLEGAL_MOVE, 1, "BLUE played an illegal move"), moved=(0, 1))
    first.game_id = "a"
    assert settle(policy, seat_conduct(policy, honest, feeder), first, None, 0.0).voided == []
    second = _report(fault(Verdict.ILLEGAL_MOVE, 1, "BLUE played an illegal move"), moved=(0, 1))
    second.game_id = "b"
    assert settle(policy, seat_conduct(policy, honest, feeder), second, None, 1.0).voided == ["a"]
    assert unrated(second) and not unrated(first)
