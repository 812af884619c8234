"""The last-resort guard of every RPC: no Python exception ever reaches a client.

gRPC answers an exception escaping a handler with ``UNKNOWN: Unexpected <class '...'>: ...``,
which tells an attacker what broke and where. :class:`ErrorGuard` wraps every method of every
service on the server: an exception the handler did not turn into a status itself becomes
``INTERNAL`` with a neutral sentence and an incident number, and the exception is logged under
that number. A request that cannot be decoded becomes ``INVALID_ARGUMENT`` instead of a
decoding error. Statuses the handlers set on purpose (``context.abort``) pass unchanged.
"""

from __future__ import annotations

import inspect
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc
from grpc.aio import AbortError

from referee.telemetry.logs import get_logger

log = get_logger("referee.server.guard")

#: What an interceptor is handed: the next step towards the method's handler.
Continuation: TypeAlias = (
    "Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]]"
)


class Undecodable:
    """What the guarded deserializer gives for bytes that are not the request message."""

    def __init__(self, size: int) -> None:
        self.size = size


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def decode(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception:
            return Undecodable(len(data))

    return decode


async def _undecodable(context: Any, request: Undecodable) -> None:
    await context.abort(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"the request ({request.size} bytes) is not a valid message for this method",
    )


async def _internal(context: Any, method: str, exc: Exception) -> None:
    incident = secrets.token_hex(4)
    log.error("rpc_failed", method=method, incident=incident, exc_info=exc)
    await context.abort(
        grpc.StatusCode.INTERNAL,
        f"the server failed on this request (incident {incident}); it has been logged",
    )


async def _checked(
    requests: AsyncIterator[Any], context: Any
) -> AsyncIterator[Any]:  # a client stream whose undecodable messages end the call
    async for request in requests:
        if isinstance(request, Undecodable):
            await _undecodable(context, request)
        yield request


def _guard_unary_request(method: str, behaviour: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isasyncgenfunction(behaviour):

        async def stream_out(request: Any, context: Any) -> AsyncIterator[Any]:
            if isinstance(request, Undecodable):
                await _undecodable(context, request)
            try:
                async for reply in behaviour(request, context):
                    yield reply
            except AbortError:
                raise
            except Exception as exc:
                await _internal(context, method, exc)

        return stream_out

    async def single(request: Any, context: Any) -> Any:
        if isinstance(request, Undecodable):
            await _undecodable(context, request)
        try:
            return await behaviour(request, context)
        except AbortError:
            raise
        except Exception as exc:
            await _internal(context, method, exc)

    return single


def _guard_stream_request(method: str, behaviour: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isasyncgenfunction(behaviour):

        async def stream_out(requests: Any, context: Any) -> AsyncIterator[Any]:
            try:
                async for reply in behaviour(_checked(requests, context), context):
                    yield reply
            except AbortError:
                raise
            except Exception as exc:
                await _internal(context, method, exc)

        return stream_out

    async def single(requests: Any, context: Any) -> Any:
        try:
            return await behaviour(_checked(requests, context), context)
        except AbortError:
            raise
        except Exception as exc:
            await _internal(context, method, exc)

    return single


def guarded(
    method: str, handler: grpc.RpcMethodHandler[Any, Any]
) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with every behaviour wrapped (see the module's text)."""
    decode = _tolerant(handler.request_deserializer)
    encode = handler.response_serializer
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            _guard_unary_request(method, handler.unary_unary), decode, encode
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            _guard_unary_request(method, handler.unary_stream), decode, encode
        )
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(
            _guard_stream_request(method, handler.stream_unary), decode, encode
        )
    assert handler.stream_stream is not None
    return grpc.stream_stream_rpc_method_handler(
        _guard_stream_request(method, handler.stream_stream), decode, encode
    )


class ErrorGuard(grpc.aio.ServerInterceptor):
    """Wraps every method handler with :func:`guarded`."""

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return guarded(handler_call_details.method, handler)
