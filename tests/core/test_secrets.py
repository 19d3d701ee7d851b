"""Generated secrets: one file each, created 0600 in a 0700 folder, generated once."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.secrets import SecretFiles


def test_ensure_generates_once_and_keeps_it_private(tmp_path: Path) -> None:
    files = SecretFiles(tmp_path)
    first = files.ensure("api-token")
    assert len(first) >= 40
    assert files.ensure("api-token") == first
    assert files.read("api-token") == first
    assert stat.S_IMODE(files.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(files.path("api-token").stat().st_mode) == 0o600
    assert [p.name for p in files.folder.iterdir()] == ["api-token"]  # no temporary file left


def test_a_wider_folder_is_narrowed(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir(mode=0o755)
    (tmp_path / "secrets").chmod(0o755)
    SecretFiles(tmp_path).write("redis-password", "s3cret")
    assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o700


def test_missing_and_empty_secrets_read_as_none(tmp_path: Path) -> None:
    files = SecretFiles(tmp_path)
    assert files.read("s3-secret-key") is None
    files.write("s3-secret-key", "")
    assert files.read("s3-secret-key") is None


def test_names_cannot_leave_the_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="invalid secret name"):
        SecretFiles(tmp_path).path("../outside")


def test_an_unreadable_secret_says_who_should_run_it(tmp_path: Path) -> None:
    files = SecretFiles(tmp_path)
    files.write("api-token", "x")
    files.path("api-token").unlink()
    files.path("api-token").mkdir()  # reading a folder fails with an OSError
    with pytest.raises(ConfigError, match="cannot read the secret file"):
        files.read("api-token")
