"""The one mapping of a read service's expected errors to gRPC statuses (server/status.py),
shared by the Arena and Submissions services."""

from __future__ import annotations

import asyncio
from typing import Any, NoReturn

import grpc
import pytest

from referee.server.status import call_in_thread, status_of
from referee.storage.errors import DuplicateGameError, NotFoundError


class _Aborted(Exception):
    pass


class _Context:
    """What a servicer context does on abort: end the call by raising."""

    def __init__(self) -> None:
        self.status: tuple[grpc.StatusCode, str] | None = None

    async def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        self.status = (code, details)
        raise _Aborted


def test_each_expected_error_has_its_status() -> None:
    """A missing item, a refusal and a bad argument (a storage conflict is one) map to their
    statuses; anything else maps to none and is left to the guard."""
    assert status_of(NotFoundError("no game 7")) is grpc.StatusCode.NOT_FOUND
    assert status_of(PermissionError("not yours")) is grpc.StatusCode.PERMISSION_DENIED
    assert status_of(ValueError("bad limit")) is grpc.StatusCode.INVALID_ARGUMENT
    assert status_of(DuplicateGameError(3, 0)) is grpc.StatusCode.INVALID_ARGUMENT
    assert status_of(RuntimeError("bug")) is None


def test_call_in_thread_ends_the_call_with_the_status_and_message() -> None:
    """An expected error aborts the call with its status and its own message."""
    context = _Context()

    def missing() -> int:
        raise NotFoundError("no tournament 'spring'")

    with pytest.raises(_Aborted):
        asyncio.run(call_in_thread(context, missing))  # type: ignore[arg-type]
    assert context.status == (grpc.StatusCode.NOT_FOUND, "no tournament 'spring'")


def test_call_in_thread_lets_a_bug_through_to_the_guard() -> None:
    """An unexpected error is not turned into a status here (the guard hides it)."""
    context: Any = _Context()

    def broken() -> int:
        raise KeyError("internal detail")

    with pytest.raises(KeyError):
        asyncio.run(call_in_thread(context, broken))
    assert context.status is None


def test_call_in_thread_returns_the_value() -> None:
    """Work that succeeds returns its value untouched."""
    assert asyncio.run(call_in_thread(_Context(), sum, [1, 2, 3])) == 6  # type: ignore[arg-type]
