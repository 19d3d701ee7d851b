"""Generated secrets of the local stack: one file each, 0600, in a 0700 folder of the state folder.

    <state_dir>/secrets/            0700
        api-token                   0600   the HTTP API's bearer token
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
import stat
from pathlib import Path

from droidretriever.errors import ConfigError

__all__ = ["SecretFiles", "generate_secret"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


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

    def ensure(self, name: str, nbytes: int = 32) -> str:
        """The secret ``name``, generated and stored now if it does not exist yet."""
        existing = self.read(name)
        if existing is not None:
            return existing
        return self.write(name, generate_secret(nbytes))

    def write(self, name: str, value: str) -> str:
        """Store ``value`` as the secret ``name`` (replacing it whole); returns it."""
        path = self.path(name)
        self._make_folder()
        temp = path.with_name(f".{name}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(value + "\n")
        temp.replace(path)
        return value

    def _make_folder(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        # mkdir's mode is masked by the umask, and an older folder may be wider: set it.
        if stat.S_IMODE(self.folder.stat().st_mode) != 0o700:
            self.folder.chmod(0o700)
