"""What ``up``, ``farm up`` and ``ask`` write under the state folder is the owner's alone (0600 files,
0700 folders) whatever the umask, and ``make_state_private`` narrows what older versions left
0644 / 0755: pid files, the farm's manifest, reports."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.farm.processes import FarmManifest, farm_dir, write_manifest
from deploy.local import make_state_private
from deploy.local.processes import PidFile, ProcessRecord


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_pid_files_and_the_farm_manifest_are_written_private(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    pid = PidFile(state / "run", "redis")
    pid.write(ProcessRecord(name="redis", pid=os.getpid(), start_ticks=1, argv=("redis-server",),
                            log_path=state / "logs" / "redis.log"))
    assert pid.read() is not None
    assert _mode(state / "run") == 0o700 and _mode(pid.path) == 0o600
    write_manifest(state, FarmManifest(mode="sim", adb_host="127.0.0.1", adb_port=15037))
    assert _mode(farm_dir(state)) == 0o700 and _mode(farm_dir(state) / "farm.json") == 0o600
    PidFile(farm_dir(state), "monitor").write(ProcessRecord(
        name="monitor", pid=os.getpid(), start_ticks=1, argv=("python",),
        log_path=farm_dir(state) / "monitor.log"))
    assert _mode(farm_dir(state) / "monitor.pid") == 0o600


def test_make_state_private_narrows_what_older_versions_left_open(tmp_path: Path) -> None:
    state = tmp_path / "state"
    older = {state / "run" / "redis.pid": 0o644, state / "farm" / "farm.json": 0o644,
             state / "farm" / "worker-emulator-5554.pid": 0o644,
             state / "reports" / "run-1" / "report.html": 0o644,
             state / "bench" / "b-1" / "results.json": 0o644,
             state / "prefect" / "prefect.db": 0o664}
    for path, mode in older.items():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        path.write_text("x")
        path.chmod(mode)
    shared = state / "notes.txt"  # not the stack's: left as it is
    shared.write_text("mine")
    shared.chmod(0o644)
    state.chmod(0o755)
    make_state_private(state)
    assert _mode(state) == 0o700
    assert {_mode(path) for path in older} == {0o600}
    assert {_mode(path.parent) for path in older} == {0o700}
    assert _mode(state / "reports") == 0o700
    assert _mode(shared) == 0o644
