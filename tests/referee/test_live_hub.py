"""The live hub spectators follow: every move as it is accepted, then the end."""

from __future__ import annotations

import asyncio

from engine.adjudication.verdicts import Verdict
from referee.live.hub import LiveEnd, LiveHub, LiveMove


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
