"""What the read services' calls share: timestamps as the wire writes them, and the Arena's
role check and worker thread, which every part of :class:`referee.rpc.arena.ArenaService`
calls through."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import ParamSpec, TypeVar

import grpc

from referee.server import access
from referee.server.access import ARENA_ACCESS, Gate
from referee.server.status import call_in_thread
from referee.storage import Repository

_P = ParamSpec("_P")
_T = TypeVar("_T")
#: The request and response types of whichever call a helper serves.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")
_Calls = TypeVar("_Calls", bound="ArenaCalls")


def wire_time(value: datetime | None) -> str:
    """``value`` in ISO 8601 with ``Z`` for UTC; ``""`` (the wire's unset) for none."""
    return value.isoformat().replace("+00:00", "Z") if value is not None else ""


class ArenaCalls:
    """The gate and the worker thread of the Arena's calls, over ``repo``."""

    repo: Repository
    #: Token checks: every call passes :meth:`_allow` with its :data:`ARENA_ACCESS` role.
    gate: Gate

    async def _allow(
        self, context: grpc.aio.ServicerContext[_Req, _Resp], rpc: str
    ) -> access.Caller | None:
        """The caller of ``rpc`` if its token (if any) and role pass, else the call ends."""
        return await self.gate.caller(context, ARENA_ACCESS[rpc])

    async def _call(
        self,
        context: grpc.aio.ServicerContext[_Req, _Resp],
        fn: Callable[_P, _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """``fn`` in a worker thread; an expected error ends the call with its status."""
        return await call_in_thread(context, fn, *args, **kwargs)


def gated_view(
    build: Callable[[_Calls, _Req], _Resp],
) -> Callable[[_Calls, _Req, grpc.aio.ServicerContext[_Req, _Resp]], Awaitable[_Resp]]:
    """An Arena read RPC made of ``build(self, request)``: the caller passes the gate for the
    RPC named like the method (:meth:`ArenaCalls._allow`), then ``build`` runs in a worker
    thread (:meth:`ArenaCalls._call`)."""
    rpc = build.__name__

    @functools.wraps(build)
    async def handle(
        self: _Calls, request: _Req, context: grpc.aio.ServicerContext[_Req, _Resp]
    ) -> _Resp:
        await self._allow(context, rpc)
        return await self._call(context, build, self, request)

    return handle
