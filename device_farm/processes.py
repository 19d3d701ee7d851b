"""Background processes of the farm (virtual phones, workers, monitor, emulators).

Each runs in its own session with ``<name>.pid`` and ``<name>.log`` under
``<state_dir>/farm``; ``farm.json`` records what ``farm up`` started so
``farm status`` and ``farm down`` know. A pid is only trusted while
``/proc/<pid>/cmdline`` still shows the command we started (pids get reused).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from device_farm.errors import FarmSetupError

__all__ = [
    "FarmManifest",
    "ProcessRecord",
    "farm_dir",
    "is_running",
    "read_manifest",
    "start_process",
    "stop_process",
    "stop_processes",
    "write_manifest",
]


class ProcessRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    pid: int
    argv: tuple[str, ...]
    log: Path


class FarmManifest(BaseModel):
    """What ``farm up`` started: the adb server the phones hang off, and the processes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: str  # sim | adb | emulators
    adb_host: str
    adb_port: int
    serials: tuple[str, ...] = ()
    processes: tuple[ProcessRecord, ...] = ()


def farm_dir(state_dir: Path) -> Path:
    """``<state_dir>/farm``, created on demand."""
    path = state_dir / "farm"
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_manifest(state_dir: Path) -> FarmManifest | None:
    """The running farm's manifest, or None when no farm is up."""
    path = farm_dir(state_dir) / "farm.json"
    if not path.is_file():
        return None
    return FarmManifest.model_validate_json(path.read_text())


def write_manifest(state_dir: Path, manifest: FarmManifest | None) -> None:
    """Write (or with None, delete) the manifest atomically."""
    path = farm_dir(state_dir) / "farm.json"
    if manifest is None:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(manifest.model_dump_json(indent=2))
    tmp.replace(path)


def start_process(state_dir: Path, name: str, argv: list[str],
                  env: dict[str, str] | None = None) -> ProcessRecord:
    """Start ``argv`` in the background with its own session, log and pid file."""
    directory = farm_dir(state_dir)
    log_path = directory / f"{name}.log"
    if argv and argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    try:
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})}, start_new_session=True,
            )
    except OSError as exc:
        raise FarmSetupError(
            f"cannot start {name}: {exc}", hint=f"check that {argv[0]} exists and is executable"
        ) from exc
    (directory / f"{name}.pid").write_text(str(proc.pid))
    return ProcessRecord(name=name, pid=proc.pid, argv=tuple(argv), log=log_path)


def is_running(record: ProcessRecord) -> bool:
    """True while the pid is alive and still runs the command we started."""
    try:
        cmdline = Path(f"/proc/{record.pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{record.pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":  # a zombie has exited
        return False
    started = [part.decode(errors="replace") for part in cmdline if part]
    if not started:
        return True  # mid-exec, /proc shows no command line for a moment
    return started[: len(record.argv)] == list(record.argv)


def stop_process(record: ProcessRecord, timeout_s: float = 10.0) -> bool:
    """SIGTERM (warm shutdown: workers hand back unfinished sub-tasks), then SIGKILL."""
    if not is_running(record):
        return False
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not is_running(record):
            break
        time.sleep(0.05)
    else:
        os.kill(record.pid, signal.SIGKILL)
    _reap(record.pid)
    (record.log.parent / f"{record.name}.pid").unlink(missing_ok=True)
    return True


def stop_processes(records: list[ProcessRecord], timeout_s: float = 15.0) -> tuple[str, ...]:
    """Stop several at once: SIGTERM to all, wait, SIGKILL stragglers; names of those stopped."""
    alive = [r for r in records if is_running(r)]
    for record in alive:
        os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(is_running(r) for r in alive):
        time.sleep(0.05)
    for record in alive:
        if is_running(record):
            os.kill(record.pid, signal.SIGKILL)
        _reap(record.pid)
        (record.log.parent / f"{record.name}.pid").unlink(missing_ok=True)
    return tuple(r.name for r in alive)


def _reap(pid: int) -> None:
    # Our own child (tests, a `farm up` in the same process) must be waited for.
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
