"""The statuses a read service's expected errors end a call with, in one place.

A service runs its storage work in a worker thread (:func:`call_in_thread`); the errors that
work raises on purpose become the call's status with their message (a missing item
``NOT_FOUND``, a refusal ``PERMISSION_DENIED``, a bad argument ``INVALID_ARGUMENT``); anything
else is a bug, left to :class:`~referee.server.guard.ErrorGuard` (``INTERNAL`` with an incident
number, nothing of the exception shown).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import grpc

from referee.storage.errors import NotFoundError

_P = ParamSpec("_P")
_T = TypeVar("_T")
#: The request and response types of whichever call a helper serves.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

#: Each expected error and its status, the first match wins.
STATUS_OF: tuple[tuple[type[Exception], grpc.StatusCode], ...] = (
    (NotFoundError, grpc.StatusCode.NOT_FOUND),
    (PermissionError, grpc.StatusCode.PERMISSION_DENIED),
    (ValueError, grpc.StatusCode.INVALID_ARGUMENT),
)


def status_of(exc: BaseException) -> grpc.StatusCode | None:
    """The status an expected error ends a call with; ``None`` for anything else."""
    return next((code for kind, code in STATUS_OF if isinstance(exc, kind)), None)


async def call_in_thread(
    context: grpc.aio.ServicerContext[_Req, _Resp],
    fn: Callable[_P, _T],
    *args: _P.args,
    **kwargs: _P.kwargs,
) -> _T:
    """``fn`` in a worker thread; an expected error ends the call with its status."""
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except Exception as exc:
        code = status_of(exc)
        if code is None:
            raise
        await context.abort(code, str(exc))
        raise AssertionError("context.abort() returned") from exc  # it always raises
