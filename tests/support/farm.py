"""Real farm processes for the tests: device workers and the monitor as subprocesses.

Phones are virtual (SimServer in the test process, reached over TCP like any
adb server). Routing by app is tested by installing an app on some phones
only: ``SimServer(..., phone_apps={serial: [packages]})`` or the control
API's ``install`` / ``uninstall``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.config import Settings, load_settings
from deploy.farm import ProcessRecord, is_running, start_process, stop_processes
from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from droidretriever.testing import FAST_FARM


def own_database(redis_url: str, db: int) -> str:
    """The session Redis's database ``db``: for tests that flush Redis while a package's farm
    (whose workers beat on database 0) is alive. Flushing database 0 under the farm wipes its
    registrations and heartbeats, and the next farm test finds no phone online."""
    if not 1 <= db <= 15:
        raise ValueError(f"own database {db}: use 1-15 (0 is the farm's)")
    return f"{redis_url.rsplit('/', 1)[0]}/{db}"


def farm_env(redis_url: str, state_dir: Path) -> dict[str, str]:
    return {"DROIDRETRIEVER_REDIS__URL": redis_url, "DROIDRETRIEVER_STATE_DIR": str(state_dir),
            **FAST_FARM}


def farm_settings(env: dict[str, str]) -> Settings:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return load_settings()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class FarmProcesses:
    """Workers (one per serial) and a monitor, started like `farm up` starts them."""

    def __init__(self, state_dir: Path, env: dict[str, str], sim_port: int) -> None:
        self.state_dir, self.env, self.sim_port = state_dir, env, sim_port
        self.workers: dict[str, ProcessRecord] = {}
        self.monitor: ProcessRecord | None = None

    worker_module = "tasks.worker.device_worker"  # what `python -m` runs as a phone's worker

    def start_worker(self, serial: str) -> ProcessRecord:
        record = start_process(self.state_dir, f"worker-{serial}-{time.monotonic_ns()}", [
            "python", "-m", self.worker_module, "--serial", serial, "--adb-host", "127.0.0.1",
            "--adb-port", str(self.sim_port), "--loglevel", "WARNING",
        ], env=self.env)
        self.workers[serial] = record
        return record

    def start_monitor(self) -> None:
        self.monitor = start_process(self.state_dir, "monitor",
                                     ["python", "-m", "tasks.worker.farm_monitor"], env=self.env)

    def stop(self) -> None:
        records = [*self.workers.values(), *([self.monitor] if self.monitor else [])]
        stop_processes(records, timeout_s=10)

    def logs(self) -> str:
        return "\n".join(f"--- {r.name}\n{r.log_path.read_text()[-3000:]}" for r in self.workers.values())


def wait_until(condition, timeout_s: float, what: str, interval_s: float = 0.1):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def record_exit_code(record: ProcessRecord) -> str:
    try:
        pid, status = os.waitpid(record.pid, os.WNOHANG)
    except ChildProcessError:
        return "not our child"
    return f"status {status}" if pid else "still running, but /proc says otherwise"


def wait_for_idle(registry: DeviceRegistry, serials: list[str], procs: FarmProcesses,
                  timeout_s: float = 60) -> None:
    def ready() -> bool:
        for serial in serials:
            record = procs.workers[serial]
            if not is_running(record):
                exit_code = record_exit_code(record)
                raise AssertionError(f"worker for {serial} exited ({exit_code}):\n"
                                     f"{record.log_path.read_text()[-3000:]}")
            if serial not in registry.serials():
                return False
            status = registry.status(serial)
            if status.state is not DeviceState.IDLE or not status.heartbeat_alive:
                return False
        return True

    wait_until(ready, timeout_s, f"workers of {serials} to be idle", interval_s=0.2)


@dataclass
class RunningFarm:
    """Virtual phones in this process, a real worker process per phone, and the registry."""

    sim: SimServer
    procs: FarmProcesses
    registry: DeviceRegistry


@contextmanager
def run_farm(procs_type: type[FarmProcesses], state_dir: Path, env: dict[str, str],
             settings: Settings, *, phones: int, monitor: bool = True) -> Iterator[RunningFarm]:
    """``phones`` virtual phones (every app) with one worker each, idle and registered."""
    with SimServer(phones=phones, port=0, seed=7) as sim:
        procs = procs_type(state_dir, env, sim.port)
        registry = DeviceRegistry.from_settings(settings)
        try:
            for serial in sim.serials:
                procs.start_worker(serial)
            if monitor:
                procs.start_monitor()
            wait_for_idle(registry, sim.serials, procs, timeout_s=120)
            yield RunningFarm(sim, procs, registry)
        finally:
            procs.stop()
