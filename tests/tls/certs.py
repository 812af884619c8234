"""Certificates made in the test: a CA, server and client certificates signed by it, valid,
expired or for another host name (the ``cryptography`` package; nothing leaves ``tmp_path``)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Pem:
    """A certificate and its key, written as PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Authority:
    """A certificate authority: its key and self-signed certificate."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate
    pem: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def authority(folder: Path, common: str = "Test CA") -> Authority:
    """A new CA, its certificate written to ``folder/<common>.pem``."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(_name(common))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _DAY)
        .not_valid_after(now + 30 * _DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    pem = folder / f"{common.replace(' ', '-')}.pem"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return Authority(key, cert, pem)


def issue(
    ca: Authority,
    folder: Path,
    stem: str,
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost"),
    *,
    client: bool = False,
    expired: bool = False,
) -> Pem:
    """A leaf certificate signed by ``ca`` for ``hosts`` (IP addresses or DNS names), written
    to ``folder/<stem>.crt`` and ``.key``; ``expired``: its validity ended yesterday."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    start, end = (now - 10 * _DAY, now - _DAY) if expired else (now - _DAY, now + 7 * _DAY)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0] if hosts else stem))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), False
        )
    )
    if names:
        cert = cert.add_extension(x509.SubjectAlternativeName(names), critical=False)
    signed = cert.sign(ca.key, hashes.SHA256())
    pem = Pem(folder / f"{stem}.crt", folder / f"{stem}.key")
    pem.cert.write_bytes(signed.public_bytes(serialization.Encoding.PEM))
    pem.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pem
