"""The local stack's secrets: generated on the first ``up``, kept private, handed to each service.

    ensure_stack_secrets(settings) -> settings with every generated secret filled in
        redis-password              Redis ``requirepass`` (in a 0600 config file, never on argv)
        s3-access-key/-secret-key   the S3 API's only identity (never a built-in default)
        prefect-auth                the Prefect API's basic auth (server and clients)
        postgres-password           the Prefect server's database role (when it runs on PostgreSQL)
        weed-jwt-* (4)              SeaweedFS: volume and filer refuse unsigned reads and writes
        weed-ca-cert, -cert, -key   SeaweedFS: master, volume and filer (HTTP and gRPC) accept
                                    only clients holding this certificate (mutual TLS)
    make_state_private(state_dir)   0700 folders, 0600 files: logs, databases, pid files, the farm's
                                    manifest, reports (older stacks were 755/644)

Only services the stack runs itself (loopback URLs) get generated secrets;
a secret set in the environment or the TOML file wins (see
:func:`core.config.fill_generated_secrets`). Secrets live in
``<state_dir>/secrets`` (:class:`core.secrets.SecretFiles`); rotating
one is deleting its file and running ``droidretriever down && droidretriever up``.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import stat
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from core.config import Settings, fill_generated_secrets
from core.private_files import FILE_MODE, FOLDER_MODE, make_private_dir
from core.secrets import SecretFiles, StackSecret, generate_secret

__all__ = ["PREFECT_USER", "ensure_stack_secrets", "make_state_private"]

PREFECT_USER = "droidretriever"  # the user name of the Prefect API's basic auth
_CERT_DAYS = 3650  # the stack's own CA and certificate: replaced by deleting them (rotation)
_WEED_JWT = (StackSecret.WEED_JWT_WRITE, StackSecret.WEED_JWT_READ,
             StackSecret.WEED_FILER_JWT_WRITE, StackSecret.WEED_FILER_JWT_READ)
_WEED_TLS = (StackSecret.WEED_CA_CERT, StackSecret.WEED_CERT, StackSecret.WEED_KEY)
# The folders the stack writes (only these: a state folder may be shared with other things):
# services' data, logs, pid files, the farm's manifest, reports, spooled objects, benchmarks.
_PRIVATE_FOLDERS = ("run", "logs", "redis", "s3", "prefect", "subscriptions", "runner", "api",
                    "farm", "spool", "secrets", "reports", "bench")


def ensure_stack_secrets(settings: Settings) -> Settings:
    """Generate the secrets the stack's own services still lack; ``settings`` with them filled in."""
    files = settings.secrets
    if settings.redis.managed and not settings.redis.has_password:
        files.ensure(StackSecret.REDIS_PASSWORD)
    if settings.serves_here(settings.s3.endpoint.host):  # the weed keys: ours wherever it binds
        if settings.s3.access_key is None:
            files.ensure(StackSecret.S3_ACCESS_KEY, 15)
        if settings.s3.secret_key is None:
            files.ensure(StackSecret.S3_SECRET_KEY)
        for name in _WEED_JWT:
            files.ensure(name)
        _ensure_weed_tls(files)
    if settings.prefect.managed and settings.prefect.auth_string is None:
        files.ensure(StackSecret.PREFECT_AUTH, value=f"{PREFECT_USER}:{generate_secret()}")
    if settings.serves_here(settings.prefect.api_url.host) and settings.prefect.database == "postgres":
        files.ensure(StackSecret.POSTGRES_PASSWORD)  # only the Prefect server here uses it
    return fill_generated_secrets(settings)


def make_state_private(state_dir: Path) -> None:
    """Narrow the state folder to its owner: 0700 for it and the stack's folders and those in
    them, no group or other bits on their files (older stacks left 0755 / 0644 behind)."""
    make_private_dir(state_dir)
    for folder in (state_dir / name for name in _PRIVATE_FOLDERS):
        if not folder.is_dir() or folder.is_symlink():
            continue
        for root, _, files in os.walk(folder):  # links are not followed
            _narrow(Path(root), FOLDER_MODE)
            for name in files:
                _narrow(Path(root) / name, FILE_MODE | stat.S_IXUSR)


def _narrow(path: Path, allowed: int) -> None:
    """Drop the mode bits of ``path`` outside ``allowed`` (a socket or a link is left as it is)."""
    try:
        info = path.lstat()
    except FileNotFoundError:  # a running service replaced it meanwhile
        return
    if (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)) \
            and stat.S_IMODE(info.st_mode) & ~allowed:
        path.chmod(stat.S_IMODE(info.st_mode) & allowed)


def _ensure_weed_tls(files: SecretFiles) -> None:
    """A CA and one certificate for every SeaweedFS part (server and client alike).

    The CA's private key is thrown away once it has signed: nobody, this
    program included, can issue another certificate SeaweedFS would accept.
    All three are generated together, so a half-written set is made anew.
    """
    if all(files.read(name) is not None for name in _WEED_TLS):
        return
    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=_CERT_DAYS))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "droidretriever local stack CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(valid[0]).not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "seaweedfs")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0]).not_valid_after(valid[1])
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1"))]), critical=False)
        .add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    files.write(StackSecret.WEED_KEY, key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode().strip())
    files.write(StackSecret.WEED_CERT, cert.public_bytes(pem).decode().strip())
    files.write(StackSecret.WEED_CA_CERT, ca.public_bytes(pem).decode().strip())
