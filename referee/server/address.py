"""Listening and connecting addresses as users type them: ``HOST``, ``HOST:PORT``,
``[IPv6]:PORT`` or ``unix:PATH``. A missing port is the default port, never gRPC's 443."""

from __future__ import annotations

#: The port the referee serves on, and clients connect to, when none is given.
DEFAULT_PORT = 50051
DEFAULT_ADDRESS = f"127.0.0.1:{DEFAULT_PORT}"


def with_port(address: str, option: str = "--listen") -> str:
    """``address`` with the default port added when it has none.

    Raises ``ValueError`` (naming ``option``) for an empty host or a port that is not a
    number from 0 to 65535.
    """
    text = address.strip()
    if text.startswith("unix:"):
        return text
    if text.startswith("["):
        host, _, rest = text.partition("]")
        host += "]"
        port = rest[1:] if rest.startswith(":") else None
        if rest and not rest.startswith(":"):
            raise ValueError(f"{option} {address}: expected [IPv6]:PORT")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    elif text.count(":") > 1:
        # A bare IPv6 address: it has no port.
        host, port = f"[{text}]", None
    else:
        host, port = text, None
    if not host or host == "[]":
        raise ValueError(f"{option} {address}: a host is needed, e.g. 127.0.0.1:{DEFAULT_PORT}")
    if port is None:
        return f"{host}:{DEFAULT_PORT}"
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{option} {address}: the port must be a number from 0 to 65535")
    return f"{host}:{int(port)}"
