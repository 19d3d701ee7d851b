"""Files under the state folder are the owner's alone whatever the umask: 0600 files, 0700 folders."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.private_files import make_private_dir, write_private


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """A person's usual umask (022): what is not set explicitly comes out 0644 / 0755."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_a_file_and_the_folders_made_for_it_are_private(tmp_path: Path) -> None:
    path = tmp_path / "state" / "reports" / "run-1" / "report.html"
    write_private(path, "<!doctype html>")
    assert path.read_text() == "<!doctype html>"
    assert _mode(path) == 0o600
    assert {_mode(p) for p in (path.parent, path.parent.parent, tmp_path / "state")} == {0o700}


def test_a_file_is_replaced_whole_and_no_temporary_file_stays(tmp_path: Path) -> None:
    path = tmp_path / "farm.json"
    path.write_text("old")
    path.chmod(0o644)  # written by an older version
    write_private(path, b"new")
    assert path.read_bytes() == b"new" and _mode(path) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["farm.json"]


def test_a_wider_folder_from_an_older_version_is_narrowed(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)
    assert make_private_dir(folder) == folder and _mode(folder) == 0o700
