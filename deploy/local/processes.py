"""Background processes with pid files, and the check that a pid is still ours.

Every process starts with umask 077 and writes its log to a 0600 file: what a
service stores (databases, append-only files, logs holding what a run saw) is
its owner's alone.

A pid file alone cannot tell our process from an unrelated one that reused
the pid after a reboot or a crash, so each record also keeps the process's
start time (``/proc/<pid>/stat`` field 22, in clock ticks since boot). ``down``
only signals a pid whose start time still matches.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, ValidationError

from core.private_files import make_private_dir, write_private
from deploy.errors import ServiceError, ServiceStartError

__all__ = [
    "PidFile",
    "ProcessRecord",
    "is_port_free",
    "is_running",
    "open_log",
    "read_start_ticks",
    "spawn_process",
    "stop_process",
]


class ProcessRecord(BaseModel):
    """What a pid file holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    pid: int
    start_ticks: int
    argv: tuple[str, ...]
    log_path: Path


def read_start_ticks(pid: int) -> int | None:
    """The start time of a live process, or None if it is gone or a zombie."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = raw.rpartition(")")[2].split()
    if len(fields) < 20 or fields[0] in {"Z", "X"}:
        return None
    return int(fields[19])


def _reap(pid: int) -> None:
    # A process we spawned in this interpreter stays a zombie until waited for.
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def is_running(record: ProcessRecord) -> bool:
    """Whether the recorded process is alive and is still the one we started."""
    _reap(record.pid)
    return read_start_ticks(record.pid) == record.start_ticks


def is_port_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be bound (nothing listens there)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def open_log(log_path: Path, heading: str) -> BinaryIO:
    """``log_path`` opened to append (0600, its folder 0700), a dated ``heading`` line written."""
    make_private_dir(log_path.parent)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.fchmod(fd, 0o600)  # a log from an older stack may be 0644
    log = os.fdopen(fd, "ab")
    log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {heading}\n".encode())
    log.flush()
    return log


def spawn_process(
    name: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    log_path: Path,
    cwd: Path,
) -> ProcessRecord:
    """Start ``argv`` detached (own session, umask 077, output to ``log_path``) and describe it."""
    cwd.mkdir(parents=True, exist_ok=True, mode=0o700)  # may be the caller's own folder: kept
    try:
        with open_log(log_path, f"starting {name}") as log:
            # A new session: the service outlives this CLI and ignores its Ctrl-C.
            proc = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=dict(env), cwd=cwd, start_new_session=True, umask=0o077,
            )
    except OSError as exc:
        raise ServiceStartError(
            f"cannot start {name} ({argv[0]}): {exc}",
            hint="is it installed? scripts/setup.sh installs every service binary",
        ) from exc
    ticks = read_start_ticks(proc.pid)
    if ticks is None:
        raise ServiceStartError(
            f"{name} exited immediately (exit code {proc.poll()})",
            hint=f"see its log: {log_path}",
        )
    return ProcessRecord(
        name=name, pid=proc.pid, start_ticks=ticks, argv=tuple(argv), log_path=log_path
    )


def stop_process(record: ProcessRecord, *, grace_s: float,
                 first: signal.Signals = signal.SIGTERM) -> None:
    """Send ``first`` (SIGTERM), wait up to ``grace_s``, then SIGKILL. No-op if not ours."""
    if not is_running(record):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(record.pid, first)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_running(record):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(record.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        if not is_running(record):
            return
        time.sleep(0.05)
    raise ServiceError(
        f"{record.name} (pid {record.pid}) did not exit after SIGKILL",
        hint="check `ps` for a stuck process (uninterruptible I/O?)",
    )


class PidFile:
    """``<state_dir>/run/<name>.pid``: a JSON ProcessRecord."""

    def __init__(self, run_dir: Path, name: str) -> None:
        self.path = run_dir / f"{name}.pid"

    def read(self) -> ProcessRecord | None:
        """The record, or None when there is none or it is unreadable (treated as stale)."""
        try:
            return ProcessRecord.model_validate_json(self.path.read_text())
        except (OSError, ValidationError):
            return None

    def write(self, record: ProcessRecord) -> None:
        """Write whole (temp + rename), so a reader never sees half a record; 0600."""
        write_private(self.path, record.model_dump_json())

    def remove(self) -> None:
        """Forget the record."""
        self.path.unlink(missing_ok=True)
