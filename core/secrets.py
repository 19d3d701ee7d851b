"""Generated secrets of the local stack: one file each, 0600, in a 0700 folder of the state folder.

    <state_dir>/secrets/            0700
        api-token                   0600   the HTTP API's bearer token
        redis-password              0600   Redis ``requirepass``
        s3-access-key, s3-secret-key       the S3 API's only identity (SeaweedFS)
        prefect-auth                       ``user:password`` of the Prefect API's basic auth
        postgres-password                  the password of Prefect's database role (PostgreSQL)
        ocr-token                          the bearer token of the host's shared OCR service
        weed-jwt-*                         SeaweedFS's JWT signing keys (volume and filer)
        weed-ca-cert, weed-cert, weed-key  SeaweedFS's mutual TLS between its own parts
        ...                                (one file per secret; the name says what it is for)

``droidretriever up`` generates what is missing (:meth:`SecretFiles.ensure`);
every client (workers, flows, CLI, API, tests) reads the same files
(:meth:`SecretFiles.read`). A secret set in the environment or the TOML file
wins over a generated one: the file only fills what the settings leave unset.

A file is written whole (temporary file + rename) and created with its final
mode, so no other user can read it, even for a moment, and a crash leaves
either no file or the whole secret.
"""

from __future__ import annotations

import os
import re
import secrets
from enum import StrEnum
from pathlib import Path

from core.errors import ConfigError
from core.private_files import FILE_MODE, make_private_dir

__all__ = ["SecretFiles", "StackSecret", "generate_secret"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class StackSecret(StrEnum):
    """The secrets of the local stack's services: their file names."""

    REDIS_PASSWORD = "redis-password"
    S3_ACCESS_KEY = "s3-access-key"
    S3_SECRET_KEY = "s3-secret-key"
    PREFECT_AUTH = "prefect-auth"
    POSTGRES_PASSWORD = "postgres-password"  # Prefect's database role on the stack's PostgreSQL
    WEED_JWT_WRITE = "weed-jwt-write"  # master signs, volume checks: writes of blobs
    WEED_JWT_READ = "weed-jwt-read"  # reads of blobs
    WEED_FILER_JWT_WRITE = "weed-filer-jwt-write"  # the S3 gateway signs, the filer checks
    WEED_FILER_JWT_READ = "weed-filer-jwt-read"
    WEED_CA_CERT = "weed-ca-cert"  # the CA that signed weed-cert (its private key is discarded)
    WEED_CERT = "weed-cert"
    WEED_KEY = "weed-key"
    OCR_TOKEN = "ocr-token"  # the bearer token of the host's shared OCR service


def generate_secret(nbytes: int = 32) -> str:
    """A URL-safe random secret of ``nbytes`` bytes of entropy."""
    return secrets.token_urlsafe(nbytes)


class SecretFiles:
    """The generated secrets under ``<state_dir>/secrets``."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / "secrets"

    def path(self, name: str) -> Path:
        """Where the secret ``name`` lives (``name``: lower case, digits and '-')."""
        if not _NAME.match(name):
            raise ValueError(f"invalid secret name {name!r}")
        return self.folder / name

    def read(self, name: str) -> str | None:
        """The secret ``name``, or None when it was never generated."""
        path = self.path(name)
        try:
            value = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConfigError(
                f"cannot read the secret file {path}: {exc.strerror}",
                hint="run DroidRetriever as the user who ran `droidretriever up`",
            ) from exc
        return value or None

    def ensure(self, name: str, nbytes: int = 32, *, value: str | None = None) -> str:
        """The secret ``name``, stored now if it does not exist yet (``value``, else generated).

        Safe when several processes ensure the same secret at once: the first one
        to store it wins (a hard link never replaces a file) and the others return
        what it stored.
        """
        existing = self.read(name)
        if existing is not None:
            return existing
        candidate = value if value is not None else generate_secret(nbytes)
        path = self.path(name)
        temp = self._write_temp(name, candidate)
        try:
            os.link(temp, path)
        except FileExistsError:
            pass
        finally:
            temp.unlink(missing_ok=True)
        stored = self.read(name)
        if stored is None:
            raise ConfigError(f"the secret file {path} is empty",
                              hint=f"delete {path}; `droidretriever up` makes a new one")
        return stored

    def write(self, name: str, value: str) -> str:
        """Store ``value`` as the secret ``name`` (replacing it whole); returns it."""
        self._write_temp(name, value).replace(self.path(name))
        return value

    def _write_temp(self, name: str, value: str) -> Path:
        """``value`` in a new 0600 file beside the secret (a name of its own), fsynced."""
        make_private_dir(self.folder)
        temp = self.path(name).with_name(f".{name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(value + "\n")
            out.flush()
            os.fsync(out.fileno())
        return temp

