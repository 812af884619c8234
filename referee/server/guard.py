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
from typing import Any, NoReturn, TypeAlias, TypeVar

import grpc
from grpc.aio import AbortError

from referee.telemetry.logs import get_logger

log = get_logger("referee.server.guard")

#: A method's request and response messages: the guard wraps every method of every service.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

#: What an interceptor is handed: the next step towards the method's handler. ``Any``: the
#: guard hands back a handler whose requests may also be :class:`Undecodable`, which the
#: stubs' interceptor signature (the same message types in and out) cannot say.
Continuation: TypeAlias = (
    "Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]]"
)

#: A method's behaviour as gRPC holds it. ``Any``: grpc's stubs type behaviours as plain
#: callables, while grpc.aio's are coroutine or async-generator functions.
Behaviour: TypeAlias = Callable[..., Any]

#: The context of a call of whichever method.
Context: TypeAlias = "grpc.aio.ServicerContext[_Req, _Resp]"


class Undecodable:
    """What the guarded deserializer gives for bytes that are not the request message."""

    def __init__(self, size: int) -> None:
        self.size = size


def _tolerant(
    deserializer: Callable[[bytes], _Req] | None,
) -> Callable[[bytes], _Req | Undecodable] | None:
    if deserializer is None:
        return None

    def decode(data: bytes) -> _Req | Undecodable:
        try:
            return deserializer(data)
        except Exception:
            return Undecodable(len(data))

    return decode


async def _undecodable(context: Context[_Req, _Resp], request: Undecodable) -> NoReturn:
    await context.abort(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"the request ({request.size} bytes) is not a valid message for this method",
    )


async def _internal(context: Context[_Req, _Resp], method: str, exc: Exception) -> NoReturn:
    incident = secrets.token_hex(4)
    log.error("rpc_failed", method=method, incident=incident, exc_info=exc)
    await context.abort(
        grpc.StatusCode.INTERNAL,
        f"the server failed on this request (incident {incident}); it has been logged",
    )


async def _checked(
    requests: AsyncIterator[_Req | Undecodable], context: Context[_Req, _Resp]
) -> AsyncIterator[_Req | Undecodable]:  # a client stream whose undecodable messages end the call
    async for request in requests:
        if isinstance(request, Undecodable):
            await _undecodable(context, request)
        yield request


def _guard_unary_request(method: str, behaviour: Behaviour) -> Behaviour:
    if inspect.isasyncgenfunction(behaviour):

        async def stream_out(
            request: object, context: Context[_Req, _Resp]
        ) -> AsyncIterator[object]:
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

    async def single(request: object, context: Context[_Req, _Resp]) -> object:
        if isinstance(request, Undecodable):
            await _undecodable(context, request)
        try:
            return await behaviour(request, context)
        except AbortError:
            raise
        except Exception as exc:
            await _internal(context, method, exc)

    return single


def _guard_stream_request(method: str, behaviour: Behaviour) -> Behaviour:
    if inspect.isasyncgenfunction(behaviour):

        async def stream_out(
            requests: AsyncIterator[_Req | Undecodable], context: Context[_Req, _Resp]
        ) -> AsyncIterator[object]:
            try:
                async for reply in behaviour(_checked(requests, context), context):
                    yield reply
            except AbortError:
                raise
            except Exception as exc:
                await _internal(context, method, exc)

        return stream_out

    async def single(
        requests: AsyncIterator[_Req | Undecodable], context: Context[_Req, _Resp]
    ) -> object:
        try:
            return await behaviour(_checked(requests, context), context)
        except AbortError:
            raise
        except Exception as exc:
            await _internal(context, method, exc)

    return single


def guarded(
    method: str, handler: grpc.RpcMethodHandler[_Req, _Resp]
) -> grpc.RpcMethodHandler[_Req | Undecodable, _Resp]:
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
