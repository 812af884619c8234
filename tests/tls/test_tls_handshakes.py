"""TLS end to end: ``referee serve --tls-cert/--tls-key [--tls-client-ca]`` and
``python -m client_sdk --tls [--ca] [--cert --key]``, with certificates made in the test.

Every failed handshake ends the client with exit 1 and exactly one line on stderr naming the
reason (no gRPC text, no traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.classserver.serving import RANDOM, cli, client, finish, serve
from tests.tls.certs import Authority, Pem, authority, issue

PREFIX = "python -m client_sdk: "


@pytest.fixture
def ca(tmp_path: Path) -> Authority:
    """The CA the server's and clients' certificates come from."""
    return authority(tmp_path, "Class CA")


def _tls_flags(server: Pem, client_ca: Authority | None = None) -> list[str]:
    flags = ["--no-web", "--tls-cert", str(server.cert), "--tls-key", str(server.key)]
    return flags + (["--tls-client-ca", str(client_ca.pem)] if client_ca else [])


def _refused(address: str, *flags: str) -> str:
    """Run a client that must fail its handshake; its one stderr line."""
    (proc,) = procs = [client(address, RANDOM, "--wait-for-server", "10", *flags)]
    (err,) = finish(procs, timeout=60)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err.strip()


@pytest.mark.slow
def test_a_game_is_played_over_tls(tmp_path: Path, ca: Authority) -> None:
    """Two bots verifying the referee by the class CA play a game to its end over TLS."""
    server = issue(ca, tmp_path, "server")
    with serve(tmp_path, *_tls_flags(server)) as address:
        flags = ("--tls", "--ca", str(ca.pem), "--games", "1")
        procs = [client(address, RANDOM, *flags, "--name", n) for n in ("tls-a", "tls-b")]
        errs = finish(procs)
    for proc, err in zip(procs, errs, strict=True):
        assert proc.returncode == 0, err
        assert "[client_sdk] 1 game(s):" in err


@pytest.mark.slow
def test_unknown_ca_and_plain_text_clients_are_told_why(tmp_path: Path, ca: Authority) -> None:
    """A client that trusts another CA (or the system's roots) is told the CA is unknown; a
    plain-text client at the TLS port is told to use --tls."""
    server = issue(ca, tmp_path, "server")
    other = authority(tmp_path, "Other CA")
    with serve(tmp_path, *_tls_flags(server)) as address:
        unknown = (
            f"{PREFIX}TLS handshake with {address} failed: the referee's certificate is not "
            "signed by a CA this client trusts (unknown CA): give the CA file with --ca FILE"
        )
        assert _refused(address, "--tls", "--ca", str(other.pem)) == unknown
        assert _refused(address, "--tls") == unknown
        plain = _refused(address)
        assert plain.startswith(f"{PREFIX}cannot reach a referee at {address}: UNAVAILABLE")
        assert plain.endswith("(does the referee speak TLS there? then connect with --tls)")


@pytest.mark.slow
def test_expired_server_certificate(tmp_path: Path, ca: Authority) -> None:
    """A referee whose certificate expired is refused, and the client says so."""
    server = issue(ca, tmp_path, "server", expired=True)
    with serve(tmp_path, *_tls_flags(server)) as address:
        assert _refused(address, "--tls", "--ca", str(ca.pem)) == (
            f"{PREFIX}TLS handshake with {address} failed: the referee's certificate has "
            "expired (its operator must renew it)"
        )


@pytest.mark.slow
def test_wrong_host_name(tmp_path: Path, ca: Authority) -> None:
    """A certificate made for another host name is refused, naming the host dialled."""
    server = issue(ca, tmp_path, "server", hosts=("referee.elsewhere.example",))
    with serve(tmp_path, *_tls_flags(server)) as address:
        assert _refused(address, "--tls", "--ca", str(ca.pem)) == (
            f"{PREFIX}TLS handshake with {address} failed: the referee's certificate is not "
            "valid for the host name '127.0.0.1': connect with the name the certificate was "
            "made for"
        )


@pytest.mark.slow
def test_mutual_tls(tmp_path: Path, ca: Authority) -> None:
    """With --tls-client-ca the referee admits a client holding a certificate the CA signed,
    and a client without one (or with one another CA signed) is told why it was refused."""
    server = issue(ca, tmp_path, "server")
    alice = issue(ca, tmp_path, "alice", hosts=("alice",), client=True)
    stranger = issue(authority(tmp_path, "Other CA"), tmp_path, "eve", hosts=("eve",), client=True)
    trust = ("--tls", "--ca", str(ca.pem))
    with serve(tmp_path, *_tls_flags(server, client_ca=ca)) as address:
        flags = (*trust, "--cert", str(alice.cert), "--key", str(alice.key), "--games", "1")
        procs = [client(address, RANDOM, *flags, "--name", n) for n in ("mtls-a", "mtls-b")]
        errs = finish(procs)
        for proc, err in zip(procs, errs, strict=True):
            assert proc.returncode == 0, err
            assert "[client_sdk] 1 game(s):" in err
        assert _refused(address, *trust) == (
            f"{PREFIX}TLS handshake with {address} failed: the referee demands a client "
            "certificate (mutual TLS): give yours with --cert FILE --key FILE"
        )
        eve = ("--cert", str(stranger.cert), "--key", str(stranger.key))
        assert _refused(address, *trust, *eve) == (
            f"{PREFIX}TLS handshake with {address} failed: the referee refused the client "
            f"certificate {stranger.cert}: it is not signed by a CA the referee trusts, or it "
            "has expired"
        )
        # Spectators too: referee watch takes the same options and says the same.
        mine = ("--cert", str(alice.cert), "--key", str(alice.key))
        listed = cli("watch", "--list", "--server", address, *trust, *mine, timeout=60)
        assert listed.returncode == 0 and listed.stdout.strip() == "no live games", listed
        bare = cli("watch", "--list", "--server", address, *trust, timeout=60)
        assert bare.returncode == 1
        assert bare.stderr.strip() == (
            f"referee watch: TLS handshake with {address} failed: the referee demands a client "
            "certificate (mutual TLS): give yours with --cert FILE --key FILE"
        )


@pytest.mark.slow
def test_bad_tls_files_stop_serve_and_the_client_at_once(tmp_path: Path, ca: Authority) -> None:
    """A missing or non-PEM file is one line from serve and from the client (exit 2)."""
    server = issue(ca, tmp_path, "server")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    done = cli("serve", "--listen", "127.0.0.1:0", "--no-web", "--tls-cert", str(junk),
               "--tls-key", str(server.key), timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == f"referee serve: {junk} holds no PEM CERTIFICATE"
    (proc,) = procs = [client("127.0.0.1:9", RANDOM, "--tls", "--ca", str(tmp_path / "none"))]
    (err,) = finish(procs, timeout=60)
    assert proc.returncode == 2
    assert err.strip().startswith(f"{PREFIX}cannot read the CA file {tmp_path / 'none'}: ")
