"""TLS for the SDK's connections: credentials from PEM files, and one plain sentence saying why
a handshake failed.

gRPC reports a failed handshake as ``UNAVAILABLE`` with OpenSSL's text inside, and a referee
that demands a client certificate only as ``Socket closed``. When a TLS connection cannot be
made, :meth:`Tls.explain` repeats the handshake with Python's own :mod:`ssl` (same CA, same
client certificate, same host name), which names the exact verification error, and turns it
into one sentence that says what to do.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc

from client_sdk._errors import SdkError

if TYPE_CHECKING:  # a launched bot's start-up parses no command line with argparse
    import argparse

#: OpenSSL's verification error codes (``X509_V_ERR_*``) that this module names in words.
_NOT_YET_VALID, _EXPIRED = 9, 10
_UNTRUSTED = {2, 18, 19, 20, 21}
_WRONG_HOST = {62, 64}
#: How long the diagnosing handshake may take (the referee was reachable a moment ago).
PROBE_TIMEOUT_S = 5.0


class TlsSetupError(SdkError):
    """A certificate, key or CA file given for TLS cannot be used."""


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise TlsSetupError(f"cannot read the {what} {path}: {exc.strerror}") from None


@dataclass(frozen=True, slots=True)
class Tls:
    """How to speak TLS to a referee: ``ca`` (PEM roots to verify it by; ``None``: the
    system's), and for mutual TLS the client's ``cert`` and ``key``."""

    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    def __post_init__(self) -> None:
        if bool(self.cert) != bool(self.key):
            raise TlsSetupError("a client certificate and its key go together (--cert and --key)")

    def credentials(self) -> grpc.ChannelCredentials:
        """gRPC channel credentials that verify the referee (and present the client's
        certificate when one is given)."""
        root = _read(self.ca, "CA file") if self.ca else None
        if self.cert and self.key:
            return grpc.ssl_channel_credentials(
                root_certificates=root,
                private_key=_read(self.key, "client key"),
                certificate_chain=_read(self.cert, "client certificate"),
            )
        return grpc.ssl_channel_credentials(root_certificates=root)

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca)
        if self.cert and self.key:
            context.load_cert_chain(self.cert, self.key)
        # gRPC speaks HTTP/2; a referee that does not see it offered may close the handshake.
        context.set_alpn_protocols(["h2"])
        return context

    def explain(self, server: str) -> str | None:
        """Why a TLS connection to ``server`` (``host:port``) fails, in one sentence; ``None``
        when the handshake succeeds or the server cannot be reached at all (not a TLS
        matter)."""
        host, _, port = server.rpartition(":")
        host = host.strip("[]")
        if not host or not port.isdigit() or host.startswith("unix"):
            return None
        try:
            context = self._context()
        except (OSError, ssl.SSLError) as exc:
            return f"the TLS files cannot be used: {exc}"
        try:
            raw = socket.create_connection((host, int(port)), PROBE_TIMEOUT_S)
        except OSError:
            return None
        try:
            with raw, context.wrap_socket(raw, server_hostname=host) as tls:
                # The referee speaks first after the handshake (its HTTP/2 settings). With
                # TLS 1.3 the client's half of the handshake is over before the referee has
                # checked the client's certificate: a refusal arrives only now, as an alert
                # or as the connection closing.
                if tls.recv(1):
                    return None
        except ssl.SSLCertVerificationError as exc:
            return _verification(exc, host)
        except ssl.SSLError as exc:
            return self._alert(exc.reason or str(exc))
        except OSError:
            pass
        return self._alert("CLOSED")

    def _alert(self, reason: str) -> str:
        """The sentence for a handshake the referee ended (``reason``: OpenSSL's alert name,
        or ``CLOSED`` when it just closed the connection)."""
        reason = reason.upper()
        if "WRONG_VERSION_NUMBER" in reason or "RECORD_LAYER_FAILURE" in reason:
            return "the referee does not speak TLS on that port (try without --tls)"
        refused = reason == "CLOSED" or "CERTIFICATE" in reason or "UNKNOWN_CA" in reason
        if not self.cert and (refused or "HANDSHAKE_FAILURE" in reason):
            return (
                "the referee demands a client certificate (mutual TLS): give yours with "
                "--cert FILE --key FILE"
            )
        if self.cert and refused:
            return (
                f"the referee refused the client certificate {self.cert}: it is not signed "
                "by a CA the referee trusts, or it has expired"
            )
        return f"the TLS handshake failed: {reason}"


def _verification(exc: ssl.SSLCertVerificationError, host: str) -> str:
    code = exc.verify_code
    if code == _EXPIRED:
        return "the referee's certificate has expired (its operator must renew it)"
    if code == _NOT_YET_VALID:
        return "the referee's certificate is not valid yet (check this machine's clock)"
    if code in _WRONG_HOST:
        return (
            f"the referee's certificate is not valid for the host name {host!r}: connect "
            "with the name the certificate was made for"
        )
    if code in _UNTRUSTED:
        return (
            "the referee's certificate is not signed by a CA this client trusts (unknown "
            "CA): give the CA file with --ca FILE"
        )
    return f"the referee's certificate was rejected: {exc.verify_message}"


def handshake_failure(credentials: object, server: str) -> str | None:
    """One sentence on why the TLS handshake with ``server`` fails, when ``credentials`` is a
    :class:`Tls` (plain gRPC credentials carry no file names to diagnose with)."""
    if not isinstance(credentials, Tls):
        return None
    why = credentials.explain(server)
    return f"TLS handshake with {server} failed: {why}" if why else None


def tls_options(parser: argparse.ArgumentParser) -> None:
    """``--tls``, ``--ca``, ``--cert`` and ``--key``: shared by every command that connects."""
    parser.add_argument(
        "--tls", action="store_true", help="connect with TLS (the referee is verified)"
    )
    parser.add_argument(
        "--ca", metavar="FILE", help="CA certificate(s) to verify the referee by (default: the "
        "system's roots)"
    )  # fmt: skip
    parser.add_argument(
        "--cert", metavar="FILE", help="client certificate for a referee that demands one "
        "(mutual TLS; with --key)"
    )  # fmt: skip
    parser.add_argument("--key", metavar="FILE", help="the client certificate's private key")


def tls_of(args: argparse.Namespace) -> Tls | None:
    """The :class:`Tls` the options ask for (``None``: plain text); its files are read once
    here, so a missing file is a :class:`TlsSetupError` before any connection."""
    if not args.tls:
        if args.ca or args.cert or args.key:
            raise TlsSetupError("--ca, --cert and --key need --tls")
        return None
    tls = Tls(args.ca, args.cert, args.key)
    tls.credentials()
    return tls
