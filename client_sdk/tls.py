"""TLS to a referee: the files a client verifies it by, the command-line options that name
them, and the one sentence on why a handshake failed.

    from client_sdk import run
    from client_sdk.tls import Tls
    run(MyBot(), "arena.example.org:443", token, credentials=Tls(ca="ca.pem"))

Every command that connects (``python -m client_sdk``, ``referee watch``) takes ``--tls``,
``--ca``, ``--cert`` and ``--key`` from :func:`tls_options` and reads them with :func:`tls_of`.
"""

from client_sdk._tls import Tls, TlsSetupError, handshake_failure, tls_of, tls_options

__all__ = ["Tls", "TlsSetupError", "handshake_failure", "tls_of", "tls_options"]
