"""Background processes of the farm (virtual phones, workers, monitor, emulators).

Each runs in its own session with ``<name>.pid`` and ``<name>.log`` under
``<state_dir>/farm``; ``farm.json`` records what ``farm up`` started so
``farm status`` and ``farm down`` know. Starting, identifying (pid + start
time, so a reused pid is never signalled) and stopping a process is the local
stack's job (:mod:`deploy.local.processes`); this module only adds the farm's
folder, its manifest and stopping many processes at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from core.private_files import make_private_dir, write_private
from deploy.errors import ServiceError
from deploy.local.processes import PidFile, ProcessRecord, is_running, spawn_process
from deploy.local.processes import stop_process as _stop_one
from device_farm.errors import FarmSetupError

__all__ = [
    "FarmManifest",
    "ProcessRecord",
    "farm_dir",
    "is_running",
    "manifest_lock",
    "read_manifest",
    "start_process",
    "stop_process",
    "stop_processes",
    "write_manifest",
]


class FarmManifest(BaseModel):
    """What ``farm up`` started: the adb server the phones hang off, and the processes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: str  # sim | adb | emulators
    adb_host: str
    adb_port: int
    serials: tuple[str, ...] = ()
    processes: tuple[ProcessRecord, ...] = ()


def farm_dir(state_dir: Path) -> Path:
    """``<state_dir>/farm``, created on demand (0700)."""
    return make_private_dir(state_dir / "farm")


def read_manifest(state_dir: Path) -> FarmManifest | None:
    """The running farm's manifest, or None when no farm is up."""
    path = farm_dir(state_dir) / "farm.json"
    if not path.is_file():
        return None
    try:
        return FarmManifest.model_validate_json(path.read_text())
    except ValidationError as exc:
        raise FarmSetupError(
            f"cannot read the farm manifest {path}: {exc.errors()[0]['msg']}",
            hint="it was written by another version: stop the pids listed in it by hand, "
            "then delete the file",
        ) from exc


@contextlib.contextmanager
def manifest_lock(state_dir: Path) -> Iterator[None]:
    """Held while processes are started again and the manifest rewritten (``up``'s repair and
    the monitor's), so that two repairers never start one worker twice."""
    with (farm_dir(state_dir) / "farm.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_manifest(state_dir: Path, manifest: FarmManifest | None) -> None:
    """Write (or with None, delete) the manifest atomically."""
    path = farm_dir(state_dir) / "farm.json"
    if manifest is None:
        path.unlink(missing_ok=True)
        return
    write_private(path, manifest.model_dump_json(indent=2))


def start_process(state_dir: Path, name: str, argv: list[str],
                  env: dict[str, str] | None = None) -> ProcessRecord:
    """Start ``argv`` in the background with its own session, log and pid file."""
    directory = farm_dir(state_dir)
    if argv and argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    try:
        record = spawn_process(name, argv, env={**os.environ, **(env or {})},
                               log_path=directory / f"{name}.log", cwd=Path.cwd())
    except ServiceError as exc:
        raise FarmSetupError(str(exc), hint=exc.hint) from exc
    PidFile(directory, name).write(record)
    return record


def stop_process(record: ProcessRecord, timeout_s: float = 10.0) -> bool:
    """SIGTERM (warm shutdown: workers hand back unfinished sub-tasks), then SIGKILL.

    False when the process had already gone.
    """
    if not is_running(record):
        _forget(record)
        return False
    _stop_one(record, grace_s=timeout_s)
    _forget(record)
    return True


def stop_processes(records: list[ProcessRecord], timeout_s: float = 15.0) -> tuple[str, ...]:
    """Stop several at once: SIGTERM to all, wait, SIGKILL stragglers; names of those stopped."""
    alive = [r for r in records if is_running(r)]
    for record in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(is_running(r) for r in alive):
        time.sleep(0.05)
    for record in alive:
        _stop_one(record, grace_s=0.0)  # SIGKILLs a straggler; no-op for one that exited
    for record in records:
        _forget(record)
    return tuple(r.name for r in alive)


def _forget(record: ProcessRecord) -> None:
    PidFile(record.log_path.parent, record.name).remove()
