"""Fetching your own failure pack of a stored game from the referee's Submissions service
(``python -m client_sdk reproduce GAME_ID BOT --server HOST --token-file F``)."""

from __future__ import annotations

import argparse

import grpc

from client_sdk._options import TokenError
from client_sdk._pack import FailurePackError, Pack, parse_pack
from client_sdk._submit import bearer, channel, reason, token
from client_sdk._tls import TlsSetupError


def fetch_pack(args: argparse.Namespace, game_id: str) -> Pack:
    """The caller's own bot's pack of ``game_id``; :class:`FailurePackError` (one line) if
    refused."""
    from client_sdk.proto import submissions_pb2 as spb
    from client_sdk.proto import submissions_pb2_grpc

    try:
        metadata = bearer(token(args))
        with channel(args) as chan:
            stub = submissions_pb2_grpc.SubmissionsStub(chan)
            reply = stub.GetMyFailurePack(
                spb.GetMyOutputRequest(game_id=game_id), metadata=metadata
            )
    except (TlsSetupError, TokenError) as exc:
        raise FailurePackError(str(exc)) from None
    except grpc.RpcError as exc:
        raise FailurePackError(reason(args, exc)) from None
    return parse_pack(reply.pack_json.encode(), f"game {game_id}")
