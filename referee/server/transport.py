"""The gRPC transport settings of the referee server: message sizes, keep-alive, TLS files."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

#: A bot message over ``MAX_BOT_MESSAGE_BYTES`` is refused by the referee: a protocol error for
#: the bot's games, with the stream intact so the bot is told why. gRPC's own cap on an incoming
#: message is higher; beyond it gRPC cuts the stream without telling the handler why (the bot
#: is then treated as having dropped its connection). A move is well under 1 KiB.
MAX_MESSAGE_BYTES = 4 << 20
MAX_BOT_MESSAGE_BYTES = 64 * 1024
#: Keep-alive: the server pings every connection after this much silence and drops it when a
#: ping is not answered in time, so a silently stalled bot is noticed (and treated as a drop).
KEEPALIVE_TIME_S = 20.0
KEEPALIVE_TIMEOUT_S = 10.0


def server_options(
    keepalive_time_s: float = KEEPALIVE_TIME_S, keepalive_timeout_s: float = KEEPALIVE_TIMEOUT_S
) -> list[tuple[str, int]]:
    """The gRPC server options: keep-alive, message sizes; clients may ping every 5 s (an SDK
    must not ping more often, or gRPC closes the connection)."""
    return [
        ("grpc.keepalive_time_ms", int(keepalive_time_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(keepalive_timeout_s * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_sent_ping_interval_without_data_ms", int(keepalive_time_s * 1000)),
        # gRPC 1.6x+ waits for a ping ack this long (default 60 s), whatever keepalive_timeout.
        ("grpc.http2.ping_timeout_ms", int(keepalive_timeout_s * 1000)),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),
    ]


SERVER_OPTIONS = server_options()


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM files for a TLS listener. With ``client_ca`` the listener is mutual TLS: every
    client must present a certificate that CA signed, or its handshake fails."""

    cert: str
    key: str
    client_ca: str | None = None

    def credentials(self) -> grpc.ServerCredentials:
        """The listener's credentials; an unreadable file or one that is not PEM is a
        :class:`ValueError` naming it (gRPC itself would only fail later, on the first
        handshake, with no word on which file)."""
        key, cert = _pem(self.key, "PRIVATE KEY"), _pem(self.cert, "CERTIFICATE")
        if self.client_ca is None:
            return grpc.ssl_server_credentials([(key, cert)])
        roots = _pem(self.client_ca, "CERTIFICATE")
        return grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=roots, require_client_auth=True
        )


def _pem(path: str, kind: str) -> bytes:
    """The bytes of a PEM file holding a ``kind`` block (``PRIVATE KEY`` also matches ``EC
    PRIVATE KEY`` and ``RSA PRIVATE KEY``)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    if kind.encode() + b"-----" not in data:
        raise ValueError(f"{path} holds no PEM {kind}")
    return data
