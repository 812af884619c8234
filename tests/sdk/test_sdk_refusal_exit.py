"""A refused bot leaves nothing of its gRPC call behind, so its process can exit.

A call left for the garbage collector at interpreter exit can wait forever in its finaliser
for a lock that one of gRPC's threads, frozen at exit, still holds: the refused bot hung
(seen in CI, about one refusal in twenty). Real server on 127.0.0.1 port 0.
"""

from __future__ import annotations

import asyncio
import gc
import threading

import grpc
import pytest

from client_sdk import SessionError, run
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable


def _live_calls() -> list[object]:
    return [o for o in gc.get_objects() if isinstance(o, grpc.Call)]


def test_a_refused_session_frees_its_call_without_the_garbage_collector() -> None:
    """After a bad-token refusal no gRPC call object is left alive, with the collector off."""
    loop = asyncio.new_event_loop()
    server = RefereeServer(games=["tetress"], auth=TokenTable({"good": "alice"}))
    address = loop.run_until_complete(server.start("127.0.0.1:0"))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    gc.collect()
    gc.disable()
    try:
        with pytest.raises(SessionError, match="UNAUTHENTICATED"):
            run(lambda state, clocks: None, address, "bad", reconnect=False, log=lambda _: None)
        left = _live_calls()
    finally:
        gc.enable()
        asyncio.run_coroutine_threadsafe(server.stop(0), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
    assert left == []
