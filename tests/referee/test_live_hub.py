"""The live hub spectators follow: every move as it is accepted, then the end."""

from __future__ import annotations

import asyncio

from engine.adjudication.verdicts import Verdict
from referee.live.hub import LiveEnd, LiveGame, LiveHub, LiveMove


def _move(ply: int) -> LiveMove:
    return LiveMove(ply, ply % 2, f"move{ply}", 0.01, "position", (1.0, 2.0))


def test_waiting_followers_get_each_new_move_then_the_end() -> None:
    """Two followers already waiting are woken by each move and by the end, in order."""

    async def scenario() -> list[list[object]]:
        hub = LiveHub()
        live = hub.start("g1", "tetress", ["a", "b"], ["RED", "BLUE"], "start")
        hub.move("g1", _move(0))

        async def follow() -> list[object]:
            return [item async for item in live.follow()]

        followers = [asyncio.create_task(follow()) for _ in range(2)]
        await asyncio.sleep(0)  # both have the first move and now wait
        for ply in (1, 2):
            hub.move("g1", _move(ply))
            await asyncio.sleep(0)
        hub.finish("g1", LiveEnd("1-0", Verdict.NORMAL, None, "done", 0))
        return list(await asyncio.wait_for(asyncio.gather(*followers), 5))

    seen = asyncio.run(scenario())
    for items in seen:
        assert [getattr(i, "ply", None) for i in items] == [0, 1, 2, None]
        assert isinstance(items[-1], LiveEnd)


def test_a_cancelled_follower_leaves_nothing_waiting() -> None:
    """A spectator that goes away stops being woken (its wait is dropped at once)."""

    async def scenario() -> int:
        hub = LiveHub()
        live = hub.start("g1", "tetress", ["a", "b"], ["RED", "BLUE"], "start")

        async def follow() -> None:
            async for _ in live.follow():
                pass

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0)
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        hub.move("g1", _move(0))  # no one to wake: must not fail
        return len(live._waiters)

    assert asyncio.run(scenario()) == 0


class _Relay:
    """Records what a hub relays, in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, object]] = []

    def started(self, live: LiveGame) -> None:
        self.sent.append(("start", live.uid, live.mode))

    def moved(self, uid: str, move: LiveMove) -> None:
        self.sent.append(("move", uid, move.ply))

    def ended(self, uid: str, end: LiveEnd) -> None:
        self.sent.append(("end", uid, end.result))


def test_a_relay_gets_own_games_in_order_and_the_end_only_once_released() -> None:
    """An own game's start and moves go to the relay as they come; its end waits for the
    release (this hub's spectators have it at once), and goes out once."""
    hub = LiveHub()
    relay = hub.relay = _Relay()
    live = hub.start("g1", "tetress", ["a", "b"], ["RED", "BLUE"], "start", mode="ladder")
    hub.move("g1", _move(1))
    hub.move("g1", _move(2))
    hub.finish("g1", LiveEnd("1-0", Verdict.NORMAL, None, "done", 0))
    assert live.end is not None and relay.sent[-1] == ("move", "g1", 2)
    hub.release("g1")
    hub.release("g1")
    assert relay.sent == [
        ("start", "g1", "ladder"),
        ("move", "g1", 1),
        ("move", "g1", 2),
        ("end", "g1", "1-0"),
    ]


def test_a_game_not_stored_is_released_aborted_and_a_remote_game_is_never_relayed() -> None:
    """A release with an end ``instead`` (the game was not stored) sends that end; a game
    another process plays (``remote``) is shown here but sent nowhere."""
    hub = LiveHub()
    relay = hub.relay = _Relay()
    hub.start("own", "tetress", ["a", "b"], ["RED", "BLUE"], "start")
    hub.finish("own", LiveEnd("1-0", Verdict.NORMAL, None, "done", 0))
    hub.release("own", LiveEnd("*", Verdict.ABORTED, None, "not stored", None))
    hub.start("far", "tetress", ["a", "b"], ["RED", "BLUE"], "start", remote=True)
    hub.move("far", _move(1))
    hub.finish("far", LiveEnd("0-1", Verdict.NORMAL, None, "done", 1))
    hub.release("far")
    assert relay.sent == [("start", "own", "casual"), ("end", "own", "*")]
    far = hub.get("far")
    assert far is not None and [m.ply for m in far.moves] == [1]
